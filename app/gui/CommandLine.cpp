#include "app/gui/CommandLine.hpp"

#include "app/gui/MainWindow.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/ChartPanel.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"

#include <QCheckBox>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTimer>
#include <cstdio>

namespace inferscope::gui {

QStringList panelIds() {
    return PanelDeck::panelIds();
}

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "--help" || arg == "-h" || arg == "-?" || arg == "--help-all" ||
            arg == "--version" || arg == "-v")
            return true;
    }
    return false;
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

ScriptRunner::ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent)
    : QObject(parent), window_(window), options_(std::move(options)) {}

void ScriptRunner::start() {
    if (options_.prompt) window_.promptEditor()->setPlainText(*options_.prompt);
    if (options_.maxTokens) window_.maxTokensBox()->setValue(*options_.maxTokens);
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat);
    if (options_.scale) window_.setPresentationScale(*options_.scale);
    // Before the backend: a load the backend choice starts then has both.
    if (options_.int8Activations) window_.setInt8Activations(*options_.int8Activations);
    if (!options_.backend.isEmpty())
        window_.setBackendChoice(BackendChoice::fromKey(options_.backend));
    if (!options_.tab.isEmpty()) window_.showPanel(options_.tab);
    connect(&window_, &MainWindow::modelLoadFailed, this,
            [this](const QString& error) { finish(1, "could not load the model: " + error); });
    connect(&window_, &MainWindow::modelLoadCancelled, this,
            [this] { finish(1, "loading was cancelled"); });
    connect(&window_, &MainWindow::generationFinished, this,
            [this](bool ok) { stepFinished(ok, "generation failed"); });
    connect(&window_, &MainWindow::comparisonFinished, this,
            [this](bool ok) { stepFinished(ok, "cached vs uncached failed"); });
    connect(&window_, &MainWindow::schemeReportFinished, this,
            [this](bool ok) { stepFinished(ok, "the weight-error report failed"); });
    connect(&window_, &MainWindow::attentionHeadFinished, this,
            [this](bool ok) { stepFinished(ok, "the attention head timing failed"); });
    connect(&window_, &MainWindow::softLabelsFinished, this,
            [this](bool ok) { stepFinished(ok, "the soft labels failed"); });
    connect(&window_, &MainWindow::speculativeFinished, this,
            [this](bool ok) { stepFinished(ok, "speculative decoding failed"); });
    connect(&window_, &MainWindow::batchingFinished, this,
            [this](bool ok) { stepFinished(ok, "the batching sweep failed"); });
    connect(&window_, &MainWindow::schedulerFinished, this,
            [this](bool ok) { stepFinished(ok, "static vs continuous batching failed"); });

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
    if (done_ || current_ || !steps_.isEmpty()) return;
    if (options_.chat) window_.chatToggle()->setChecked(*options_.chat); // the model may reset it
    if (options_.run) {
        const bool exporting = !options_.exportFolder.isEmpty();
        if (exporting) steps_ << Step::ProfiledRun;
        steps_ << Step::Run;
        if (exporting)
            steps_ << Step::Comparison << Step::WeightReport << Step::AttentionHead
                   << Step::SoftLabels;
        // The serving lab needs the GPU engine (many sequences per step).
        if (exporting && window_.backendName().startsWith("vulkan"))
            steps_ << Step::Speculative << Step::Batching << Step::Scheduler;
    }
    runNextStep();
}

void ScriptRunner::runNextStep() {
    if (done_) return;
    if (steps_.isEmpty()) {
        current_.reset();
        return afterSteps();
    }
    current_ = steps_.takeFirst();
    bool started = false;
    switch (*current_) {
    case Step::ProfiledRun:
        savedProfile_ = window_.profileToggle()->isChecked();
        savedMaxTokens_ = window_.maxTokensBox()->value();
        window_.profileToggle()->setChecked(true);
        window_.maxTokensBox()->setValue(kProfiledTokens);
        std::fprintf(stderr, "inferscope: a profiled %d-token run for the kernel timings\n",
                     kProfiledTokens);
        started = window_.generate();
        if (!started) {
            window_.profileToggle()->setChecked(savedProfile_);
            window_.maxTokensBox()->setValue(savedMaxTokens_);
        }
        break;
    case Step::Run:
        started = window_.generate();
        break;
    case Step::Comparison:
        std::fprintf(stderr, "inferscope: cached vs uncached, %d tokens each\n", kComparisonTokens);
        started = window_.compareCaching(kComparisonTokens);
        break;
    case Step::WeightReport: {
        SchemeReportRequest request;
        request.schemes = window_.schemesPanel()->checkedSchemes();
        std::fprintf(stderr, "inferscope: weight errors of %lld schemes\n",
                     static_cast<long long>(request.schemes.size()));
        started = window_.runSchemeReport(request);
        break;
    }
    case Step::AttentionHead: {
        std::vector<std::uint32_t> lengths;
        for (std::uint32_t n = 256; n <= kAttentionHeadMaxLength; n *= 2) lengths.push_back(n);
        std::fprintf(stderr, "inferscope: one attention head, n = 256 to %u\n",
                     kAttentionHeadMaxLength);
        started = window_.timeAttentionHead(lengths);
        break;
    }
    case Step::SoftLabels: {
        // Two schemes keep the script short; the panel's button measures four.
        const QStringList schemes{"int8-row", "int4-g128"};
        std::fprintf(stderr, "inferscope: soft labels, reference and %lld schemes\n",
                     static_cast<long long>(schemes.size()));
        started = window_.computeSoftLabels(window_.softLabelsPanel()->prompt(), schemes);
        break;
    }
    case Step::Speculative: {
        // Short: two drafts, 48 positions, 24 tokens per run (the panel's defaults: every
        // draft, 144 positions, 64 tokens).
        window_.speculativePanel()->setPositions(kScriptSpeculativePositions);
        window_.speculativePanel()->setRunTokens(kScriptSpeculativeTokens);
        auto request = window_.speculativePanel()->request();
        request.study.draftFormats = {"int8-row", "int4-g128"};
        std::fprintf(stderr,
                     "inferscope: speculative decoding, 2 drafts over %d positions, g = 2, 4, 8\n",
                     kScriptSpeculativePositions);
        started = window_.runSpeculative(request);
        break;
    }
    case Step::Batching: {
        window_.batchingPanel()->setLargestBatch(kScriptLargestBatch);
        auto request = window_.batchingPanel()->request();
        request.steps = kScriptSweepSteps;
        std::fprintf(stderr, "inferscope: batched decode, B = 1 to %d\n", kScriptLargestBatch);
        started = window_.runBatchingSweep(request);
        break;
    }
    case Step::Scheduler: {
        window_.schedulerPanel()->setSmallMix(true);
        window_.schedulerPanel()->setSlots(kScriptSlots);
        const auto request = window_.schedulerPanel()->request();
        std::fprintf(stderr, "inferscope: static vs continuous batching, %u requests on %d slots\n",
                     request.mix.requests, kScriptSlots);
        started = window_.runSchedulerComparison(request);
        break;
    }
    }
    if (!started) finish(1, "cannot run the script's next step: no model is loaded");
}

void ScriptRunner::stepFinished(bool ok, const QString& failure) {
    if (done_ || !current_) return;
    if (*current_ == Step::ProfiledRun) {
        window_.profileToggle()->setChecked(savedProfile_);
        window_.maxTokensBox()->setValue(savedMaxTokens_);
    }
    if (*current_ == Step::Run) ran_ = true;
    if (!ok) return finish(1, failure);
    runNextStep();
}

void ScriptRunner::afterSteps() {
    if (done_) return;
    if (options_.layer) {
        window_.selection()->setLayer(*options_.layer);
        QCoreApplication::processEvents(); // relayout before the screenshot grabs the window
    }
    if (!options_.exportFolder.isEmpty() && !exportPanels()) return;
    if (!options_.screenshot.isEmpty()) {
        if (!window_.grab().save(options_.screenshot, "PNG"))
            return finish(1, "cannot write the screenshot " + options_.screenshot);
        std::fprintf(stderr, "inferscope: saved the window as %s\n",
                     qPrintable(options_.screenshot));
    }
    finish(0);
}

bool ScriptRunner::exportPanels() {
    QDir folder(options_.exportFolder);
    if (!folder.mkpath(".")) {
        finish(1, "cannot create the export folder " + folder.absolutePath());
        return false;
    }
    for (auto* panel : window_.panels()) {
        // An empty chart is no figure: leave it out and say what would have filled it.
        if (!panel->hasData() || panel->dataTables().empty()) {
            QString why;
            if (!ran_ && panel->panelId() != "model-card")
                why = "no run in this script (add --run)";
            else if (panel->panelId() == "kernel-timings")
                why = "the backend (" + window_.backendName() +
                      ") has no GPU timestamps; kernel timings need a Vulkan device";
            else if (panel->panelId() == "batching" || panel->panelId() == "scheduler" ||
                     panel->panelId() == "kv-blocks")
                why = "batching runs on the GPU engine; the backend (" + window_.backendName() +
                      ") serves one sequence";
            else if (panel->panelId() == "speculative")
                why = "speculative decoding runs a target and a draft engine on the GPU; the "
                      "backend is " +
                      window_.backendName();
            else if (panel->panelId() == "quant-levels")
                why = "this run did not record the residual stream";
            else
                why = "nothing measured: " + panel->emptyHint();
            leftOut_.insert(panel->panelId(), why);
            std::fprintf(stderr, "inferscope: left out %s: %s\n", qPrintable(panel->panelId()),
                         qPrintable(why));
            continue;
        }
        QString error;
        auto written = widgets::ChartExport::exportAll(*panel, folder, &error);
        if (!error.isEmpty()) {
            finish(1, "export failed: " + error);
            return false;
        }
        exported_ << written;
    }
    if (exported_.isEmpty()) {
        finish(1, "export: no panel has data to export");
        return false;
    }
    std::fprintf(stderr, "inferscope: wrote %lld files into %s\n",
                 static_cast<long long>(exported_.size()), qPrintable(folder.absolutePath()));
    return true;
}

void ScriptRunner::finish(int status, const QString& message) {
    if (done_) return;
    done_ = true;
    if (!message.isEmpty()) std::fprintf(stderr, "inferscope: %s\n", qPrintable(message));
    emit finished(status);
    if (options_.quit) QCoreApplication::exit(status);
}

} // namespace inferscope::gui
