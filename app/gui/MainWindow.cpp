#include "app/gui/MainWindow.hpp"

#include "compute/formats/WeightFormat.hpp"
#include "compute/vulkan/VulkanContext.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/MemoryBudgetPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSpinBox>

namespace inferscope::gui {

MainWindow::MainWindow(BackendFactory factory, QWidget* parent)
    : QMainWindow(parent), factoryInjected_(static_cast<bool>(factory)) {
    jobs_ = std::make_unique<widgets::LabJobs>(std::move(factory));
    settingsWriter_.setMaxThreadCount(1); // one thread: the last write wins
    setWindowTitle(tr("InferScope"));
    setObjectName("InferScopeMainWindow");
    setAcceptDrops(true);
    baseFont_ = QApplication::font();
    {
        QSettings store;
        settings_ = GuiSettings::load(store);
    }

    buildUi();
    buildMenus();
    subscribe();
    applySettingsToUi();
    if (!settings_.geometry.isEmpty())
        restoreGeometry(settings_.geometry);
    else
        resize(1280, 800);
    if (!settings_.windowState.isEmpty()) restoreState(settings_.windowState);
    updateRecentMenu();
    updateActions();
}

MainWindow::~MainWindow() {
    jobs_.reset(); // cancels every job and waits for the lab's thread
}

void MainWindow::subscribe() {
    auto* jobs = jobs_.get();
    // The panels follow the lab's records themselves.
    deck_->subscribe(*jobs);
    // The window's own part: the model label, the output text and the status bar.
    connect(jobs, &widgets::LabJobs::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(jobs, &widgets::LabJobs::formatSwitched, this, &MainWindow::onFormatSwitched);
    connect(jobs, &widgets::LabJobs::generationStarted, this, [this](qint64 promptTokens) {
        statusLabel_->setText(tr("Prefill of %1 prompt tokens…").arg(promptTokens));
    });
    connect(jobs, &widgets::LabJobs::textGenerated, this, [this](const QString& text) {
        outputEdit_->moveCursor(QTextCursor::End);
        outputEdit_->insertPlainText(text);
        outputEdit_->ensureCursorVisible();
    });
    connect(jobs, &widgets::LabJobs::runUpdated, this, [this](const compute::RunRecordPtr& run) {
        lastRun_ = run;
        if (!run->finished)
            statusLabel_->setText(tr("Generating… %1 tokens").arg(run->generatedTokens));
    });
    // The panels had no layers before their data: now they can show the selected one.
    connect(jobs, &widgets::LabJobs::activationsUpdated, this, [this] {
        deck_->outliers()->setLayer(selection_->layer());
        deck_->levels()->setLayer(selection_->layer());
    });
    connect(jobs, &widgets::LabJobs::jobProgress, this,
            [this](quint64, widgets::JobKind kind, const QString& stage, int percent) {
                onJobProgress(kind, stage, percent);
            });
    connect(jobs, &widgets::LabJobs::jobFinished, this,
            [this](quint64, widgets::JobKind kind) { onJobEnded(kind, {}, false); });
    connect(jobs, &widgets::LabJobs::jobFailed, this,
            [this](quint64, widgets::JobKind kind, const QString& error) {
                onJobEnded(kind, error, true);
            });
}

void MainWindow::dropJobs() {
    // A stopped run would still answer; dropped, its answers about the old model are discarded.
    jobs_->dropAll(widgets::JobKind::Load);
    lastRun_.reset();
}

void MainWindow::loadModel(const QString& path) {
    if (path.isEmpty()) return;
    dropJobs();
    // A load already past its commit point cannot be dropped: its model arrives first.
    if (auto previous = jobs_->current(widgets::JobKind::Load)) jobs_->drop(previous);
    loadingPath_ = path;
    progress_->setValue(0);
    statusLabel_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    jobs_->load(path, backendChoice_);
    updateActions();
}

void MainWindow::cancelLoad() {
    if (!isLoading()) return;
    if (!jobs_->drop(jobs_->current(widgets::JobKind::Load)))
        return; // already committed: its answer is on the way
    statusLabel_->setText(
        hasModel() ? tr("Loading cancelled; %1 stays loaded").arg(QFileInfo(modelPath_).fileName())
                   : tr("Loading cancelled"));
    updateActions();
    emit modelLoadCancelled();
}

void MainWindow::onModelLoaded(const widgets::LoadedModelPtr& model) {
    // A load the window gave up on can still have committed (its cancel came too late): the
    // session then holds that model, so the window shows it until the newer load lands.
    const QString path = QString::fromStdString(model->path.string());
    const QString displayName = QString::fromStdString(model->displayName);
    modelPath_ = path;
    modelHasChat_ = model->chatTemplate;
    backendName_ = QString::fromStdString(model->backend);
    lastRun_.reset();
    // The device the lab runs on is one more size in the memory budget.
    if (model->deviceBytes)
        deck_->budget()->setDetectedDevice(QString::fromStdString(model->deviceName),
                                           model->deviceBytes);
    modelLabel_->setText(tr("<b>%1</b><br>%2 · backend: %3")
                             .arg(displayName.toHtmlEscaped(),
                                  QFileInfo(path).fileName().toHtmlEscaped(), backendName_));
    modelLabel_->setToolTip(path);
    updateActions(); // enables the chat toggle only for a model with a chat template
    chatCheck_->setChecked(modelHasChat_ && settings_.chat);
    // Two thirds of the way up, where the chapter looks (its layer 16 of 24).
    selection_->setLayer(int(model->card->config.layers) * 2 / 3);
    // The window always names a format (compute::kDefaultWeightFormat until one is picked).
    deck_->schemes()->setGenerationScheme(factoryInjected_ ||
                                                  backendChoice_.kind == BackendChoice::Kind::Cpu
                                              ? QString("fp32")
                                              : QString::fromStdString(backendChoice_.weightFormat),
                                          true);
    settings_.lastModel = path;
    settings_.firstStart = false;
    settings_.addRecentModel(path);
    updateRecentMenu();
    saveSettings();
    setWindowTitle(tr("InferScope — %1").arg(displayName));
    QLocale locale;
    loadedText_ = model->warmupSeconds > 0
                      ? tr("Loaded %1 · pipelines warmed by an untimed run (%2 ms, not recorded)")
                            .arg(displayName, locale.toString(model->warmupSeconds * 1e3, 'f', 0))
                      : tr("Loaded %1").arg(displayName);
}

void MainWindow::onFormatSwitched(const widgets::FormatSwitchPtr& result) {
    backendName_ = QString::fromStdString(result->backend);
    const QString format = QString::fromStdString(result->format);
    deck_->schemes()->setGenerationScheme(format, true);
    modelLabel_->setText(modelLabel_->text().section(tr(" · backend: "), 0, 0) +
                         tr(" · backend: %1").arg(backendName_));
    QLocale locale;
    statusLabel_->setText(
        tr("Generating with %1: weights re-packed in place in %2 ms (no file read) · pipelines "
           "warmed by an untimed run (%3 ms, not recorded)")
            .arg(format, locale.toString(result->switchSeconds * 1e3, 'f', 1),
                 locale.toString(result->warmupSeconds * 1e3, 'f', 0)));
}

void MainWindow::onJobProgress(widgets::JobKind kind, const QString& stage, int percent) {
    if (kind == widgets::JobKind::Load) progress_->setValue(std::max(0, percent));
    if (kind != widgets::JobKind::WeightReport && kind != widgets::JobKind::QualityReport)
        statusLabel_->setText(stage);
}

void MainWindow::onJobEnded(widgets::JobKind kind, const QString& error, bool failed) {
    updateActions();
    QLocale locale;
    using widgets::JobKind;
    switch (kind) {
    case JobKind::Load:
        if (!failed) {
            // A superseded load that committed late: the newer one announces itself.
            if (isLoading()) return;
            statusLabel_->setText(loadedText_);
            emit modelLoaded(modelPath_);
            return;
        }
        statusLabel_->setText(tr("Could not load %1").arg(QFileInfo(loadingPath_).fileName()));
        showError(tr("Could not load the model"),
                  tr("%1\n\n%2%3")
                      .arg(loadingPath_, error,
                           hasModel() ? tr(" The previous model stays loaded.") : QString()));
        emit modelLoadFailed(error);
        return;
    case JobKind::Generate:
        if (failed) {
            statusLabel_->setText(tr("Generation failed"));
            showError(tr("Generation failed"), error);
            emit generationFinished(false);
            return;
        }
        if (lastRun_) {
            outputEdit_->setPlainText(QString::fromStdString(lastRun_->text));
            statusLabel_->setText(
                tr("%1 %2 tokens · time to first token %3 ms · %4 tokens/s%5")
                    .arg(lastRun_->cancelled ? tr("Stopped after") : tr("Generated"))
                    .arg(lastRun_->generatedTokens)
                    .arg(locale.toString(lastRun_->prefillSeconds * 1e3, 'f', 1))
                    .arg(locale.toString(lastRun_->decodeTokensPerSecond(), 'f', 1))
                    .arg(lastRun_->warm ? tr(" (warm pipelines)") : QString()));
        }
        emit generationFinished(true);
        return;
    case JobKind::CompareCaching:
        reportJobEnd(tr("Cached vs uncached"), deck_->caching()->summaryText(), error, failed);
        emit comparisonFinished(!failed);
        return;
    case JobKind::WeightReport:
    case JobKind::QualityReport:
        reportJobEnd(tr("Scheme report"), deck_->schemes()->summaryText(), error, failed);
        emit schemeReportFinished(!failed);
        return;
    case JobKind::BatchingSweep:
    case JobKind::Scheduler: {
        const bool sweep = kind == JobKind::BatchingSweep;
        reportJobEnd(sweep ? tr("Batching sweep") : tr("Static vs continuous batching"),
                     sweep ? deck_->batching()->summaryText() : deck_->scheduler()->summaryText(),
                     error, failed);
        if (sweep)
            emit batchingFinished(!failed);
        else
            emit schedulerFinished(!failed);
        return;
    }
    case JobKind::SwitchFormat:
        if (failed) {
            statusLabel_->setText(tr("Could not switch the generation scheme"));
            showError(tr("Could not switch the generation scheme"), error);
        }
        emit generationSchemeSwitched(!failed);
        return;
    case JobKind::AttentionHead:
        reportJobEnd(tr("Attention head timing"), deck_->attention()->summaryText(), error, failed);
        emit attentionHeadFinished(!failed);
        return;
    case JobKind::SoftLabels:
        reportJobEnd(tr("Soft labels"), deck_->softLabels()->summaryText(), error, failed);
        emit softLabelsFinished(!failed);
        return;
    case JobKind::Speculative:
        reportJobEnd(tr("Speculative decoding"), deck_->speculative()->summaryText(), error,
                     failed);
        emit speculativeFinished(!failed);
        return;
    }
}

compute::GenerationRequest MainWindow::requestFromUi() {
    readSettingsFromUi();
    compute::GenerationRequest request;
    request.prompt = promptEdit_->toPlainText().toStdString();
    request.chat = chatCheck_->isEnabled() && chatCheck_->isChecked();
    request.systemPrompt = systemEdit_->text().toStdString();
    request.maxNewTokens = maxTokensSpin_->value();
    request.sampling.greedy = greedyCheck_->isChecked();
    request.sampling.temperature = static_cast<float>(temperatureSpin_->value());
    request.sampling.topK = topKSpin_->value();
    request.sampling.topP = static_cast<float>(topPSpin_->value());
    request.sampling.seed = static_cast<std::uint64_t>(seedSpin_->value());
    request.sampling.repeatPenalty = static_cast<float>(repeatPenaltySpin_->value());
    request.kernelTimings = profileCheck_->isChecked();
    return request;
}

bool MainWindow::generate() {
    if (!hasModel() || isBusy() || isLoading()) return false;
    const auto request = requestFromUi();
    outputEdit_->clear();
    statusLabel_->setText(tr("Generating…"));
    jobs_->generate(request);
    updateActions();
    return true;
}

void MainWindow::stop() {
    if (!isGenerating()) return;
    jobs_->stop(jobs_->current(widgets::JobKind::Generate));
    statusLabel_->setText(tr("Stopping after the current token…"));
}

void MainWindow::setBackendChoice(const BackendChoice& choice) {
    if (factoryInjected_) return;
    int index = backendBox_->findData(choice.key());
    if (index < 0) return; // no such device here
    backendBox_->setCurrentIndex(index);
    BackendChoice next = choice;
    next.int8Activations = backendChoice_.int8Activations; // the device keys do not carry it
    if (next.weightFormat.empty()) next.weightFormat = backendChoice_.weightFormat;
    const bool changed = !(next == backendChoice_);
    backendChoice_ = next;
    settings_.backend = choice.key();
    if (changed && hasModel()) loadModel(modelPath_);
}

void MainWindow::setInt8Activations(bool on) {
    int8Check_->setChecked(on);
    if (factoryInjected_ || backendChoice_.int8Activations == on) return;
    backendChoice_.int8Activations = on;
    settings_.int8Activations = on;
    // An engine build option (the kernels' specialization): the model loads again with it.
    if (hasModel()) loadModel(modelPath_);
    updateActions();
}

void MainWindow::showPanel(const QString& panelId) {
    deck_->showPanel(panelId);
}

bool MainWindow::startLabJob(const QString& status, const std::function<void()>& start,
                             bool needsModel) {
    if ((needsModel && !hasModel()) || isBusy() || isLoading()) return false;
    statusLabel_->setText(status);
    start();
    updateActions();
    return true;
}

void MainWindow::reportJobEnd(const QString& what, const QString& summary, const QString& error,
                              bool failed) {
    statusLabel_->setText(failed ? tr("%1 failed").arg(what) : summary);
    // A cancel is the user's own doing, not an error to show.
    if (failed && error != "cancelled") showError(tr("%1 failed").arg(what), error);
}

bool MainWindow::compareCaching(int tokens) {
    return startLabJob(tr("Cached vs uncached: %1 tokens each…").arg(tokens), [&] {
        auto request = requestFromUi();
        request.maxNewTokens = tokens;
        jobs_->compareCaching(request);
    });
}

bool MainWindow::timeAttentionHead(const std::vector<std::uint32_t>& lengths) {
    if (lengths.empty()) return false;
    compute::experiments::AttentionHeadOptions options;
    options.lengths = lengths;
    return startLabJob(
        tr("Timing one attention head up to n = %1…").arg(lengths.back()),
        [&] { jobs_->attentionHead(options); }, false);
}

bool MainWindow::computeSoftLabels(const QString& prompt, const QStringList& schemes) {
    if (!hasModel() || isBusy() || isLoading()) return false;
    compute::SoftLabelRequest request;
    request.prompt = prompt.toStdString();
    try {
        for (const auto& name : schemes)
            request.schemes.push_back(models::parseQuantScheme(name.toStdString()));
    } catch (const std::exception& error) {
        showError(tr("Soft labels failed"), QString::fromUtf8(error.what()));
        return false;
    }
    return startLabJob(
        tr("Next-token distribution of the reference and %1 schemes…").arg(schemes.size()),
        [&] { jobs_->softLabels(request); });
}

bool MainWindow::runSchemeReport(const SchemeReportRequest& request) {
    if (!hasModel() || isBusy() || isLoading()) return false;
    std::vector<models::QuantSchemeSpec> schemes;
    try {
        for (const auto& name : request.schemes)
            schemes.push_back(models::parseQuantScheme(name.toStdString()));
    } catch (const std::exception& error) {
        showError(tr("Scheme report failed"), QString::fromUtf8(error.what()));
        return false;
    }
    return startLabJob(request.quality ? tr("Measuring the schemes' quality…")
                                       : tr("Measuring the schemes' weight errors…"),
                       [&] {
                           if (!request.quality) {
                               jobs_->weightReport(schemes);
                               return;
                           }
                           compute::QualityRequest quality;
                           quality.schemes = schemes;
                           quality.perplexityTokens = request.perplexityTokens;
                           quality.batteryQuestions = request.batteryQuestions;
                           jobs_->qualityReport(quality);
                       });
}

void MainWindow::cancelSchemeReport() {
    if (!isReporting()) return;
    jobs_->drop(jobs_->current(widgets::JobKind::WeightReport));
    jobs_->drop(jobs_->current(widgets::JobKind::QualityReport));
    statusLabel_->setText(tr("Scheme report cancelled"));
    updateActions();
    emit schemeReportFinished(false);
}

void MainWindow::setGenerationScheme(const QString& scheme) {
    const auto format = compute::weightFormatFromName(scheme.toStdString());
    const bool onVulkan = !factoryInjected_ && backendChoice_.kind == BackendChoice::Kind::Vulkan;
    if (!format || !onVulkan) {
        deck_->schemes()->setGenerationScheme(scheme, false);
        statusLabel_->setText(
            !format
                ? tr("%1 is host-analysis only: the GPU engine has no kernel for it").arg(scheme)
                : tr("%1 runs on the Vulkan backend; the CPU reference computes in fp32")
                      .arg(scheme));
        return;
    }
    backendChoice_.weightFormat = scheme.toStdString(); // later loads use it too
    deck_->schemes()->setGenerationScheme(scheme, true);
    if (!hasModel() || isLoading()) return; // the load on its way builds it in this format
    if (isBusy()) {
        statusLabel_->setText(tr("%1 applies once the running job ends").arg(scheme));
        return;
    }
    statusLabel_->setText(tr("Re-packing the weights as %1…").arg(scheme));
    jobs_->switchFormat(scheme);
    updateActions();
}

QStringList MainWindow::exportAll(const QString& folder, QString* error) {
    QStringList files;
    QDir dir(folder);
    for (auto* panel : panels()) {
        QString message;
        auto written = widgets::ChartExport::exportAll(*panel, dir, &message);
        if (!message.isEmpty()) {
            if (error) *error = message;
            return {};
        }
        files << written;
    }
    if (error) error->clear();
    statusLabel_->setText(tr("Exported %1 files to %2").arg(files.size()).arg(dir.absolutePath()));
    emit exported(files);
    return files;
}

bool MainWindow::runBatchingSweep(const compute::BatchingRequest& request) {
    return startLabJob(tr("Measuring batched decode…"), [&] { jobs_->batchingSweep(request); });
}

bool MainWindow::runSchedulerComparison(const compute::SchedulingRequest& request) {
    return startLabJob(tr("Running static, then continuous batching…"),
                       [&] { jobs_->schedulerComparison(request); });
}

void MainWindow::cancelServing() {
    // A dropped job sends nothing more: say here that it ended.
    const bool sweep = jobs_->drop(jobs_->current(widgets::JobKind::BatchingSweep));
    const bool scheduler = jobs_->drop(jobs_->current(widgets::JobKind::Scheduler));
    if (!sweep && !scheduler) return;
    statusLabel_->setText(tr("Cancelled"));
    updateActions();
    if (sweep) emit batchingFinished(false);
    if (scheduler) emit schedulerFinished(false);
}

bool MainWindow::runSpeculative(const compute::SpeculativeRequest& request) {
    return startLabJob(tr("Speculative decoding: the target, then each draft…"),
                       [&] { jobs_->speculative(request); });
}

void MainWindow::cancelSpeculative() {
    if (!jobs_->drop(jobs_->current(widgets::JobKind::Speculative))) return;
    statusLabel_->setText(tr("Cancelled"));
    updateActions();
    emit speculativeFinished(false); // a dropped job sends nothing more
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    for (auto kind : {widgets::JobKind::Generate, widgets::JobKind::CompareCaching,
                      widgets::JobKind::WeightReport, widgets::JobKind::QualityReport,
                      widgets::JobKind::AttentionHead, widgets::JobKind::SoftLabels,
                      widgets::JobKind::BatchingSweep, widgets::JobKind::Scheduler,
                      widgets::JobKind::Speculative})
        jobs_->stop(jobs_->current(kind));
    QMainWindow::closeEvent(event);
}

} // namespace inferscope::gui
