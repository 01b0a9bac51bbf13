#include "app/gui/CommandLine.hpp"

#include "app/gui/MainWindow.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/LabSelection.hpp"

#include <QCheckBox>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTimer>
#include <cstdio>

namespace inferscope::gui {

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
    QCommandLineOption tab("tab", "Panel to show, by id (timings, kv-cache, schemes, ...).", "id");
    QCommandLineOption layer("layer", "Layer the activation panels show (after the run).", "n");
    QCommandLineOption run("run", "Generate once the model is loaded.");
    QCommandLineOption exportTo("export",
                                "Write every panel's PNG, SVG, CSV and JSON into "
                                "this folder (after the run, if --run).",
                                "folder");
    QCommandLineOption screenshot("screenshot", "Save the whole window as a PNG file when done.",
                                  "file");
    QCommandLineOption quit("quit", "Quit when the steps above are done (status 1 if one failed).");
    parser.addOptions({model, prompt, maxTokens, noChat, chat, scale, backend, tab, layer, run,
                       exportTo, screenshot, quit});
    parser.process(arguments); // --help / --version / unknown options exit here

    CommandLineOptions options;
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
    options.tab = parser.value(tab);
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

ScriptRunner::ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent)
    : QObject(parent), window_(window), options_(std::move(options)) {}

void ScriptRunner::start() {
    if (options_.prompt) window_.promptEditor()->setPlainText(*options_.prompt);
    if (options_.maxTokens) window_.maxTokensBox()->setValue(*options_.maxTokens);
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat);
    if (options_.scale) window_.setPresentationScale(*options_.scale);
    if (!options_.backend.isEmpty())
        window_.setBackendChoice(BackendChoice::fromKey(options_.backend));
    if (!options_.tab.isEmpty()) window_.showPanel(options_.tab);
    connect(&window_, &MainWindow::modelLoadFailed, this,
            [this](const QString& error) { finish(1, "could not load the model: " + error); });
    connect(&window_, &MainWindow::modelLoadCancelled, this,
            [this] { finish(1, "loading was cancelled"); });
    connect(&window_, &MainWindow::generationFinished, this, &ScriptRunner::afterRun);

    if (!options_.model.isEmpty()) {
        QString path = options_.model;
        if (path == "default") {
            try {
                path = QString::fromStdString(models::resolveModelPath("default").string());
            } catch (const std::exception& error) {
                QTimer::singleShot(0, this, [this, message = QString::fromUtf8(error.what())] {
                    finish(1, message);
                });
                return;
            }
        }
        connect(&window_, &MainWindow::modelLoaded, this, &ScriptRunner::afterModel);
        window_.loadModel(path);
    } else if (window_.isLoading()) {
        connect(&window_, &MainWindow::modelLoaded, this, &ScriptRunner::afterModel);
    } else {
        QTimer::singleShot(0, this, &ScriptRunner::afterModel);
    }
}

void ScriptRunner::afterModel() {
    if (done_) return;
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat); // the model may reset it
    if (options_.run) {
        if (!window_.generate()) finish(1, "cannot generate: no model is loaded");
        return;
    }
    afterRun(true);
}

void ScriptRunner::afterRun(bool ok) {
    if (done_) return;
    if (!ok) return finish(1, "generation failed");
    if (options_.layer) {
        window_.selection()->setLayer(*options_.layer);
        QCoreApplication::processEvents(); // relayout before the screenshot grabs the window
    }
    if (!options_.exportFolder.isEmpty()) {
        QString error;
        exported_ = window_.exportAll(options_.exportFolder, &error);
        if (exported_.isEmpty()) return finish(1, "export failed: " + error);
        std::fprintf(stderr, "inferscope: wrote %lld files into %s\n",
                     static_cast<long long>(exported_.size()), qPrintable(options_.exportFolder));
    }
    if (!options_.screenshot.isEmpty()) {
        if (!window_.grab().save(options_.screenshot, "PNG"))
            return finish(1, "cannot write the screenshot " + options_.screenshot);
        std::fprintf(stderr, "inferscope: saved the window as %s\n",
                     qPrintable(options_.screenshot));
    }
    finish(0);
}

void ScriptRunner::finish(int status, const QString& message) {
    if (done_) return;
    done_ = true;
    if (!message.isEmpty()) std::fprintf(stderr, "inferscope: %s\n", qPrintable(message));
    emit finished(status);
    if (options_.quit) QCoreApplication::exit(status);
}

} // namespace inferscope::gui
