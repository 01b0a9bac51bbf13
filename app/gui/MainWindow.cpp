#include "app/gui/MainWindow.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include "app/gui/ControlsColumn.hpp"
#include "app/gui/WheelGuard.hpp"
#include "compute/formats/WeightFormat.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/LabSelection.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

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
    // One wheel rule for every control of the application, installed once.
    WheelGuard::install(this);
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
    // The panels follow the lab's records and start their own jobs.
    widgets::PanelContext context;
    context.jobs = jobs;
    context.selection = selection_;
    context.prompt = [this] { return column_->request(); };
    context.requestGenerationFormat = [this](const QString& format) {
        return setGenerationScheme(format);
    };
    deck_->attach(context);
    for (auto* panel : deck_->panels())
        connect(panel, &widgets::LabPanel::jobEnded, this,
                [this, panel](const QString& what, bool ok, const QString& error) {
                    onLabJobEnded(panel, what, ok, error);
                });
    // The window's own part: the model line, the output text and the status bar.
    connect(jobs, &widgets::LabJobs::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(jobs, &widgets::LabJobs::formatSwitched, this, &MainWindow::onFormatSwitched);
    connect(jobs, &widgets::LabJobs::generationStarted, this, [this](qint64 promptTokens) {
        statusLabel_->setText(tr("Prefill of %1 prompt tokens…").arg(promptTokens));
    });
    connect(jobs, &widgets::LabJobs::textGenerated, column_, &ControlsColumn::appendOutput);
    connect(jobs, &widgets::LabJobs::runProgressed, this,
            [this](const compute::RunDeltaPtr& delta) {
                statusLabel_->setText(tr("Generating… %1 tokens").arg(delta->part.generatedTokens));
            });
    connect(jobs, &widgets::LabJobs::runFinished, this,
            [this](const compute::RunRecordPtr& run) { lastRun_ = run; });
    connect(jobs, &widgets::LabJobs::jobProgress, this,
            [this](quint64, const QString& kind, const QString& stage, int percent) {
                if (kind == widgets::kLoadJob) progress_->setValue(std::max(0, percent));
                statusLabel_->setText(stage);
            });
    connect(jobs, &widgets::LabJobs::jobFinished, this,
            [this](quint64, const QString& kind) { onJobEnded(kind, {}, false); });
    connect(jobs, &widgets::LabJobs::jobFailed, this,
            [this](quint64, const QString& kind, const QString& error) {
                onJobEnded(kind, error, true);
            });
    connect(jobs, &widgets::LabJobs::busyChanged, this, &MainWindow::updateActions);
    connect(jobs, &widgets::LabJobs::jobStarted, this, &MainWindow::updateActions);
}

void MainWindow::dropJobs() {
    // A stopped run would still answer; dropped, its answers about the old model are discarded.
    jobs_->dropAll(widgets::kLoadJob);
    lastRun_.reset();
}

void MainWindow::loadModel(const QString& path) {
    if (path.isEmpty()) return;
    dropJobs();
    // A load already past its commit point cannot be dropped: its model arrives first.
    if (auto previous = jobs_->current(widgets::kLoadJob)) jobs_->drop(previous);
    loadingPath_ = path;
    progress_->setValue(0);
    statusLabel_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    jobs_->load(path, backendChoice_);
    updateActions();
}

void MainWindow::cancelLoad() {
    if (!isLoading()) return;
    if (!jobs_->drop(jobs_->current(widgets::kLoadJob)))
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
    displayName_ = QString::fromStdString(models::printableText(model->displayName));
    modelPath_ = path;
    modelHasChat_ = model->chatTemplate;
    backendName_ = QString::fromStdString(model->backend);
    generationFormat_ = QString::fromStdString(model->generationFormat);
    lastRun_.reset();
    column_->setModelLine(tr("<b>%1</b><br>%2 · backend: %3")
                              .arg(displayName_.toHtmlEscaped(),
                                   QFileInfo(path).fileName().toHtmlEscaped(), backendName_),
                          path);
    updateActions(); // enables the chat toggle only for a model with a chat template
    chatToggle()->setChecked(modelHasChat_ && settings_.chat);
    // Two thirds of the way up, where the chapter looks (its layer 16 of 24).
    selection_->setLayer(int(model->card->config.layers) * 2 / 3);
    settings_.lastModel = path;
    settings_.firstStart = false;
    settings_.addRecentModel(path);
    updateRecentMenu();
    saveSettings();
    setWindowTitle(tr("InferScope — %1").arg(displayName_));
    QLocale locale;
    loadedText_ = model->warmupSeconds > 0
                      ? tr("Loaded %1 · pipelines warmed by an untimed run (%2 ms, not recorded)")
                            .arg(displayName_, locale.toString(model->warmupSeconds * 1e3, 'f', 0))
                      : tr("Loaded %1").arg(displayName_);
}

void MainWindow::onFormatSwitched(const widgets::FormatSwitchPtr& result) {
    backendName_ = QString::fromStdString(result->backend);
    generationFormat_ = QString::fromStdString(result->format);
    column_->setModelLine(column_->modelLine().section(tr(" · backend: "), 0, 0) +
                              tr(" · backend: %1").arg(backendName_),
                          modelPath_);
    QLocale locale;
    statusLabel_->setText(
        tr("Generating with %1: weights re-packed in place in %2 ms (no file read) · pipelines "
           "warmed by an untimed run (%3 ms, not recorded)")
            .arg(QString::fromStdString(result->format),
                 locale.toString(result->switchSeconds * 1e3, 'f', 1),
                 locale.toString(result->warmupSeconds * 1e3, 'f', 0)));
}

void MainWindow::onJobEnded(const QString& kind, const QString& error, bool failed) {
    updateActions();
    if (kind == widgets::kLoadJob) {
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
    } else if (kind == widgets::kGenerateJob) {
        if (failed) {
            statusLabel_->setText(tr("Generation failed"));
            showError(tr("Generation failed"), error);
            emit generationFinished(false);
            return;
        }
        if (lastRun_) {
            QLocale locale;
            column_->setOutput(QString::fromStdString(lastRun_->text));
            statusLabel_->setText(
                tr("%1 %2 tokens · time to first token %3 ms · %4 tokens/s%5")
                    .arg(lastRun_->cancelled ? tr("Stopped after") : tr("Generated"))
                    .arg(lastRun_->generatedTokens)
                    .arg(locale.toString(lastRun_->prefillSeconds * 1e3, 'f', 1))
                    .arg(locale.toString(lastRun_->decodeTokensPerSecond(), 'f', 1))
                    .arg(lastRun_->warm ? tr(" (warm pipelines)") : QString()));
        }
        emit generationFinished(true);
    } else if (kind == widgets::kSwitchFormatJob) {
        if (failed) {
            statusLabel_->setText(tr("Could not switch the generation scheme"));
            showError(tr("Could not switch the generation scheme"), error);
        }
        emit generationSchemeSwitched(!failed);
    }
}

void MainWindow::onLabJobEnded(widgets::LabPanel* panel, const QString& what, bool ok,
                               const QString& error) {
    updateActions();
    if (ok) {
        statusLabel_->setText(panel->summaryText());
        return;
    }
    // A cancel is the user's own doing, not an error to show.
    if (error == "cancelled") {
        statusLabel_->setText(tr("%1 cancelled").arg(what));
        return;
    }
    statusLabel_->setText(tr("%1 failed").arg(what));
    showError(tr("%1 failed").arg(what), error);
}

QString MainWindow::whyGenerateWaits() const {
    if (isLoading()) return tr("Generate waits: the model is still loading");
    if (!hasModel()) return tr("Generate needs a model: open one with Ctrl+O");
    if (isGenerating()) return tr("Already generating: Esc stops the run");
    if (jobs_->running(widgets::kSwitchFormatJob))
        return tr("Generate waits: the weights are being re-packed and warmed up as %1")
            .arg(QString::fromStdString(backendChoice_.weightFormat));
    QStringList running;
    for (const auto& kind : jobs_->liveKinds()) {
        auto* owner = deck_->panel(kind);
        running << (owner ? owner->title() : kind);
    }
    return tr("Generate waits: %1 is running (its panel's Cancel stops it)")
        .arg(running.join(tr(", ")));
}

bool MainWindow::generate() {
    if (!hasModel() || isBusy() || isLoading()) {
        statusLabel_->setText(whyGenerateWaits());
        return false;
    }
    column_->readSettings(settings_);
    const auto request = column_->request();
    column_->setOutput({});
    // The text below names what produced it: a later model or scheme leaves it labelled.
    column_->setOutputSource(tr("%1 · %2 · %3").arg(displayName_, generationFormat_, backendName_));
    statusLabel_->setText(tr("Generating…"));
    jobs_->generate(request);
    updateActions();
    return true;
}

void MainWindow::stop() {
    if (!isGenerating()) return;
    jobs_->stop(jobs_->current(widgets::kGenerateJob));
    statusLabel_->setText(tr("Stopping after the current token…"));
}

void MainWindow::setBackendChoice(const BackendChoice& choice) {
    if (factoryInjected_) return;
    if (column_->selectBackend(choice.key()) < 0) return; // no such device here
    BackendChoice next = choice;
    next.int8Activations = backendChoice_.int8Activations; // the device keys do not carry it
    if (next.weightFormat.empty()) next.weightFormat = backendChoice_.weightFormat;
    const bool changed = !(next == backendChoice_);
    backendChoice_ = next;
    settings_.backend = choice.key();
    if (changed && hasModel()) loadModel(modelPath_);
}

void MainWindow::setInt8Activations(bool on) {
    int8ActivationsToggle()->setChecked(on);
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

bool MainWindow::setGenerationScheme(const QString& scheme) {
    const auto format = compute::weightFormatFromName(scheme.toStdString());
    const bool onVulkan = !factoryInjected_ && backendChoice_.kind == BackendChoice::Kind::Vulkan;
    if (!format || !onVulkan) {
        statusLabel_->setText(
            !format
                ? tr("%1 is host-analysis only: the GPU engine has no kernel for it").arg(scheme)
                : tr("%1 runs on the Vulkan backend; the CPU reference computes in fp32")
                      .arg(scheme));
        return false;
    }
    backendChoice_.weightFormat = scheme.toStdString(); // later loads use it too
    if (!hasModel() || isLoading()) return true; // the load on its way builds it in this format
    if (isBusy()) {
        statusLabel_->setText(tr("%1 applies once the running job ends").arg(scheme));
        return true;
    }
    statusLabel_->setText(tr("Re-packing the weights as %1…").arg(scheme));
    jobs_->switchFormat(scheme);
    updateActions();
    return true;
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

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    jobs_->stopAll();
    QMainWindow::closeEvent(event);
}

} // namespace inferscope::gui
