#include "app/gui/CommandLine.hpp"

#include "app/gui/PanelRegistry.hpp"
#include "compute/vulkan/DeviceChoice.hpp"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QRegularExpression>

namespace inferscope::gui {

QStringList panelIds() {
    return registeredPanelIds();
}

QStringList withoutQtOptions(const QStringList& arguments) {
    // QGuiApplication's and QApplication's own options (Qt 6.4), each with one or two dashes.
    static const QStringList withValue = {"platform",        "platformpluginpath",
                                          "platformtheme",   "plugin",
                                          "qwindowgeometry", "geometry",
                                          "qwindowicon",     "icon",
                                          "qwindowtitle",    "title",
                                          "display",         "name",
                                          "style",           "stylesheet",
                                          "session",         "qmljsdebugger"};
    static const QStringList flags = {"reverse", "widgetcount", "nograb",
                                      "dograb",  "sync",        "testability"};
    QStringList kept;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString& arg = arguments[i];
        QString name = arg;
        if (i == 0 || !name.startsWith('-') || name == "-" || name == "--") {
            kept << arg;
            continue;
        }
        name.remove(0, name.startsWith("--") ? 2 : 1);
        const qsizetype equals = name.indexOf('=');
        const QString bare = equals < 0 ? name : name.left(equals);
        if (withValue.contains(bare)) {
            if (equals < 0) ++i; // its value is the next argument
            continue;
        }
        if (flags.contains(name)) continue;
        kept << arg;
    }
    return kept;
}

CommandLineOptions parseCommandLine(const QStringList& arguments, QString* error) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "InferScope: what makes LLM inference cheap, measured on a real model.");
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption model("model",
                             "Model to load: a GGUF file, a safetensors folder, or "
                             "'default'.",
                             "path");
    QCommandLineOption prompt("prompt", "Prompt text.", "text");
    QCommandLineOption maxTokens("max-tokens", "Tokens to generate at most.", "n");
    QCommandLineOption noChat("no-chat", "Send the prompt as is, without the chat template.");
    QCommandLineOption chat("chat", "Wrap the prompt in the model's chat template.");
    QCommandLineOption scale("scale", "Presentation scale for text and charts (e.g. 1.5).",
                             "factor");
    QCommandLineOption backend(
        "backend", "Backend: 'vulkan' (the first device), 'vulkan:N' or 'cpu'.", "name");
    QCommandLineOption int8Activations(
        "int8-activations",
        "Vulkan engine: int8 activations on the 4-bit formats (as llama.cpp's CPU backend).");
    QCommandLineOption noInt8Activations("no-int8-activations",
                                         "Vulkan engine: float activations (the default).");
    QCommandLineOption tab("tab", "Panel to show, by id: " + panelIds().join(", ") + ".", "id");
    QCommandLineOption layer("layer", "Layer the activation panels show (after the run).", "n");
    QCommandLineOption run("run", "Generate once the model is loaded.");
    QCommandLineOption exportTo("export",
                                "Write every panel's PNG, SVG, CSV and JSON into "
                                "this folder (after the run, if --run).",
                                "folder");
    QCommandLineOption screenshot("screenshot", "Save the whole window as a PNG file when done.",
                                  "file");
    QCommandLineOption quit("quit", "Quit when the steps above are done (status 1 if one failed).");
    parser.addOptions({model, prompt, maxTokens, noChat, chat, scale, backend, int8Activations,
                       noInt8Activations, tab, layer, run, exportTo, screenshot, quit});
    CommandLineOptions options;
    // parse(), not process(): process() exits the program, and prints nothing useful before
    // a display exists; the caller prints and exits instead.
    if (!parser.parse(arguments)) {
        *error = parser.errorText() + " (see --help)";
        return options;
    }
    if (parser.isSet("help") || parser.isSet("help-all")) {
        options.help = true;
        options.text = parser.helpText();
        return options;
    }
    if (parser.isSet("version")) {
        options.version = true;
        options.text = QCoreApplication::applicationName() + " " +
                       QCoreApplication::applicationVersion() + "\n";
        return options;
    }
    if (!parser.positionalArguments().isEmpty()) {
        *error = "unexpected argument '" + parser.positionalArguments().front() + "' (see --help)";
        return options;
    }
    options.model = parser.value(model);
    if (parser.isSet(prompt)) options.prompt = parser.value(prompt);
    if (parser.isSet(maxTokens)) {
        bool ok = false;
        int n = parser.value(maxTokens).toInt(&ok);
        if (!ok || n < 1 || n > 4096) {
            *error = "--max-tokens wants a whole number from 1 to 4096";
            return options;
        }
        options.maxTokens = n;
    }
    if (parser.isSet(noChat) && parser.isSet(chat)) {
        *error = "--chat and --no-chat contradict each other";
        return options;
    }
    if (parser.isSet(noChat)) options.chat = false;
    if (parser.isSet(chat)) options.chat = true;
    if (parser.isSet(scale)) {
        bool ok = false;
        double s = parser.value(scale).toDouble(&ok);
        if (!ok || s < 0.5 || s > 3.0) {
            *error = "--scale wants a number from 0.5 to 3";
            return options;
        }
        options.scale = s;
    }
    options.backend = parser.value(backend);
    if (options.backend == "vulkan") options.backend = "vulkan:0";
    if (!options.backend.isEmpty() && options.backend != "cpu" &&
        !QRegularExpression("^vulkan:[0-9]+$").match(options.backend).hasMatch()) {
        *error = "--backend wants cpu, vulkan or vulkan:N";
        return options;
    }
    // The device rule of the CLI (DeviceChoice): vulkan:N names an existing device, and
    // without --backend INFERSCOPE_DEVICE (when set) picks it, checked the same way.
    if (options.backend != "cpu") {
        try {
            const auto text = options.backend.mid(QString("vulkan:").size()).toStdString();
            const auto device = options.backend.isEmpty()
                                    ? compute::requestedDevice(std::nullopt)
                                    : compute::requestedDevice(text, "--backend vulkan:N");
            if (device) options.backend = QString("vulkan:%1").arg(*device);
        } catch (const compute::ComputeError& e) {
            *error = QString::fromStdString(e.what());
            return options;
        }
    }
    if (parser.isSet(int8Activations) && parser.isSet(noInt8Activations)) {
        *error = "--int8-activations and --no-int8-activations contradict each other";
        return options;
    }
    if (parser.isSet(int8Activations) || parser.isSet(noInt8Activations)) {
        if (options.backend == "cpu") {
            *error = "--int8-activations is for the Vulkan engine, not --backend cpu";
            return options;
        }
        options.int8Activations = parser.isSet(int8Activations);
    }
    options.tab = parser.value(tab);
    if (parser.isSet(tab) && !panelIds().contains(options.tab)) {
        *error = "--tab: no panel '" + options.tab + "'; the panels are " + panelIds().join(", ");
        return options;
    }
    if (parser.isSet(layer)) {
        bool ok = false;
        int n = parser.value(layer).toInt(&ok);
        if (!ok || n < 0) {
            *error = "--layer wants a layer number (0 is the first)";
            return options;
        }
        options.layer = n;
    }
    options.run = parser.isSet(run);
    options.exportFolder = parser.value(exportTo);
    options.screenshot = parser.value(screenshot);
    options.quit = parser.isSet(quit);
    return options;
}

} // namespace inferscope::gui
