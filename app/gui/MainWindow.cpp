#include "app/gui/MainWindow.hpp"

#include "compute/WeightFormat.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMap>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <filesystem>

namespace inferscope::gui {

namespace {
constexpr double kScaleStep = 1.25;

QString firstLocalPath(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const auto& url : mime->urls())
        if (url.isLocalFile()) return url.toLocalFile();
    return {};
}
} // namespace

MainWindow::MainWindow(BackendFactory factory, QWidget* parent)
    : QMainWindow(parent), factoryInjected_(static_cast<bool>(factory)) {
    worker_ = std::make_unique<GenerationWorker>(std::move(factory));
    setWindowTitle(tr("InferScope"));
    setObjectName("InferScopeMainWindow");
    setAcceptDrops(true);
    baseFont_ = QApplication::font();
    {
        QSettings store;
        settings_ = GuiSettings::load(store);
    }

    worker_->moveToThread(&workerThread_);
    workerThread_.setObjectName("inferscope-worker");
    auto* w = worker_.get();
    connect(w, &GenerationWorker::loadProgress, this, &MainWindow::onLoadProgress);
    connect(w, &GenerationWorker::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(w, &GenerationWorker::loadFailed, this, &MainWindow::onLoadFailed);
    connect(w, &GenerationWorker::loadCancelled, this, &MainWindow::onLoadCancelled);
    connect(w, &GenerationWorker::generationStarted, this, &MainWindow::onGenerationStarted);
    connect(w, &GenerationWorker::textGenerated, this, &MainWindow::onTextGenerated);
    connect(w, &GenerationWorker::runProgress, this, &MainWindow::onRunProgress);
    connect(w, &GenerationWorker::activationsReady, this, &MainWindow::onActivations);
    connect(w, &GenerationWorker::generationFinished, this, &MainWindow::onGenerationFinished);
    connect(w, &GenerationWorker::generationFailed, this, &MainWindow::onGenerationFailed);
    connect(w, &GenerationWorker::comparisonProgress, this,
            [this](quint64 job, const QString& stage) {
                if (job == compareJob_) statusLabel_->setText(stage);
            });
    connect(w, &GenerationWorker::comparisonFinished, this, &MainWindow::onComparisonFinished);
    connect(w, &GenerationWorker::comparisonFailed, this, &MainWindow::onComparisonFailed);
    connect(w, &GenerationWorker::schemeReportProgress, this, &MainWindow::onSchemeReportProgress);
    connect(w, &GenerationWorker::schemeReportFinished, this, &MainWindow::onSchemeReportFinished);
    connect(w, &GenerationWorker::schemeReportFailed, this, &MainWindow::onSchemeReportFailed);
    workerThread_.start();

    buildUi();
    buildMenus();
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
    if (runCancel_) runCancel_->store(true);
    if (compareCancel_) compareCancel_->store(true);
    if (schemeCancel_) schemeCancel_->store(true);
    if (loadTicket_) loadTicket_->cancel();
    workerThread_.quit();
    workerThread_.wait();
    worker_.reset(); // its thread has ended, so it can go from here
}

void MainWindow::buildUi() {
    splitter_ = new QSplitter(Qt::Horizontal, this);
    // The controls scroll rather than squash when a large presentation scale needs more room.
    auto* scroll = new QScrollArea(splitter_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* controls = new QWidget(scroll);
    auto* column = new QVBoxLayout(controls);

    auto* modelBox = new QGroupBox(tr("Model"), controls);
    auto* modelRow = new QHBoxLayout(modelBox);
    modelLabel_ = new QLabel(tr("No model loaded"), modelBox);
    modelLabel_->setObjectName("modelLabel");
    modelLabel_->setWordWrap(true);
    auto* openButton = new QPushButton(tr("Open…"), modelBox);
    openButton->setToolTip(tr("Open a GGUF file or a safetensors folder (Ctrl+O); you can also "
                              "drop one on the window"));
    connect(openButton, &QPushButton::clicked, this, &MainWindow::openModelDialog);
    modelRow->addWidget(modelLabel_, 1);
    modelRow->addWidget(openButton);
    column->addWidget(modelBox);

    auto* backendGroup = new QGroupBox(tr("Backend"), controls);
    auto* backendLayout = new QVBoxLayout(backendGroup);
    backendBox_ = new QComboBox(backendGroup);
    backendBox_->setObjectName("backendBox");
    for (const auto& option : availableBackends())
        backendBox_->addItem(option.label, option.choice.key());
    backendBox_->setToolTip(
        factoryInjected_ ? tr("The backend is fixed by whoever started the window")
                         : tr("Where the transformer runs: a Vulkan device (the GPU engine) or "
                              "the plain CPU reference (the oracle); switching reloads the model"));
    backendBox_->setEnabled(!factoryInjected_);
    profileCheck_ = new QCheckBox(tr("Profile kernels (GPU timestamps)"), backendGroup);
    profileCheck_->setObjectName("profileKernels");
    profileCheck_->setToolTip(tr("Time every kernel with GPU timestamps; they put a barrier "
                                 "after each dispatch, so steps run slower while this is on"));
    backendLayout->addWidget(backendBox_);
    backendLayout->addWidget(profileCheck_);
    column->addWidget(backendGroup);
    connect(backendBox_, &QComboBox::activated, this, [this](int index) {
        setBackendChoice(BackendChoice::fromKey(backendBox_->itemData(index).toString()));
    });

    auto* promptBox = new QGroupBox(tr("Prompt"), controls);
    auto* promptLayout = new QVBoxLayout(promptBox);
    promptEdit_ = new QPlainTextEdit(promptBox);
    promptEdit_->setObjectName("promptEditor");
    promptEdit_->setPlaceholderText(tr("Write a prompt, then Ctrl+Return to generate"));
    promptEdit_->setTabChangesFocus(true);
    chatCheck_ = new QCheckBox(tr("Use the model's chat template"), promptBox);
    chatCheck_->setToolTip(tr("Wrap the prompt as a user turn in the model's chat format "
                              "(ChatML for SmolLM2)"));
    systemEdit_ = new QLineEdit(promptBox);
    systemEdit_->setPlaceholderText(tr("System message (optional, chat only)"));
    connect(chatCheck_, &QCheckBox::toggled, systemEdit_, &QWidget::setEnabled);
    promptLayout->addWidget(promptEdit_, 1);
    promptLayout->addWidget(chatCheck_);
    promptLayout->addWidget(systemEdit_);
    column->addWidget(promptBox, 2);

    auto* samplingBox = new QGroupBox(tr("Sampling"), controls);
    auto* form = new QFormLayout(samplingBox);
    greedyCheck_ = new QCheckBox(tr("Greedy (always the most likely token)"), samplingBox);
    temperatureSpin_ = new QDoubleSpinBox(samplingBox);
    temperatureSpin_->setRange(0.0, 5.0);
    temperatureSpin_->setSingleStep(0.1);
    topKSpin_ = new QSpinBox(samplingBox);
    topKSpin_->setRange(0, 1000);
    topKSpin_->setSpecialValueText(tr("off"));
    topPSpin_ = new QDoubleSpinBox(samplingBox);
    topPSpin_->setRange(0.0, 1.0);
    topPSpin_->setSingleStep(0.05);
    seedSpin_ = new QSpinBox(samplingBox);
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    repeatPenaltySpin_ = new QDoubleSpinBox(samplingBox);
    repeatPenaltySpin_->setRange(0.5, 3.0);
    repeatPenaltySpin_->setSingleStep(0.05);
    maxTokensSpin_ = new QSpinBox(samplingBox);
    maxTokensSpin_->setObjectName("maxTokens");
    maxTokensSpin_->setRange(1, 4096);
    for (auto* box :
         std::initializer_list<QWidget*>{temperatureSpin_, topKSpin_, topPSpin_, seedSpin_})
        connect(greedyCheck_, &QCheckBox::toggled, box,
                [box](bool greedy) { box->setEnabled(!greedy); });
    form->addRow(greedyCheck_);
    form->addRow(tr("Temperature"), temperatureSpin_);
    form->addRow(tr("Top-k"), topKSpin_);
    form->addRow(tr("Top-p"), topPSpin_);
    form->addRow(tr("Seed"), seedSpin_);
    form->addRow(tr("Repetition penalty"), repeatPenaltySpin_);
    form->addRow(tr("Max new tokens"), maxTokensSpin_);
    column->addWidget(samplingBox);

    auto* buttons = new QHBoxLayout;
    generateButton_ = new QPushButton(tr("Generate"), controls);
    generateButton_->setObjectName("generateButton");
    generateButton_->setToolTip(tr("Generate (Ctrl+Return)"));
    stopButton_ = new QPushButton(tr("Stop"), controls);
    stopButton_->setObjectName("stopButton");
    stopButton_->setToolTip(tr("Stop after the current token (Esc)"));
    connect(generateButton_, &QPushButton::clicked, this, &MainWindow::generate);
    connect(stopButton_, &QPushButton::clicked, this, &MainWindow::stop);
    buttons->addWidget(generateButton_);
    buttons->addWidget(stopButton_);
    column->addLayout(buttons);

    auto* outputBox = new QGroupBox(tr("Output"), controls);
    auto* outputLayout = new QVBoxLayout(outputBox);
    outputEdit_ = new QPlainTextEdit(outputBox);
    outputEdit_->setObjectName("output");
    outputEdit_->setReadOnly(true);
    outputLayout->addWidget(outputEdit_);
    column->addWidget(outputBox, 3);

    tabs_ = new QTabWidget(splitter_);
    timings_ = new widgets::TimingsPanel(tabs_);
    kvCache_ = new widgets::KvCachePanel(tabs_);
    outliers_ = new widgets::ActivationOutliersPanel(tabs_);
    modelCard_ = new widgets::ModelCardPanel(tabs_);
    kernels_ = new widgets::KernelTimingsPanel(tabs_);
    caching_ = new widgets::CachingPanel(tabs_);
    levels_ = new widgets::QuantLevelsPanel(tabs_);
    schemes_ = new widgets::SchemesPanel(tabs_);
    // Short tab names, all in sight at any presentation scale: no scroll arrows, no eliding
    // (the panel's full title is on the chart and in the tab's tooltip).
    tabs_->setUsesScrollButtons(false);
    tabs_->setElideMode(Qt::ElideNone);
    tabs_->setObjectName("panelTabs");
    const QMap<QString, QString> tabNames = {{"timings", tr("Prefill/decode")},
                                             {"kernel-timings", tr("Kernels")},
                                             {"cached-vs-uncached", tr("Caching")},
                                             {"kv-cache", tr("KV cache")},
                                             {"activation-outliers", tr("Outliers")},
                                             {"quant-levels", tr("Levels")},
                                             {"schemes", tr("Schemes")},
                                             {"model-card", tr("Model")}};
    for (auto* panel : panels()) {
        tabs_->addTab(panel, tabNames.value(panel->panelId(), panel->title()));
        tabs_->setTabToolTip(tabs_->count() - 1, panel->title() + ": " + panel->explanation());
    }

    // The shared selection: the layer and the scheme the lab panels look at.
    selection_ = new widgets::LabSelection(this);
    connect(outliers_, &widgets::ActivationOutliersPanel::layerChanged, selection_,
            &widgets::LabSelection::setLayer);
    connect(levels_, &widgets::QuantLevelsPanel::layerChanged, selection_,
            &widgets::LabSelection::setLayer);
    connect(selection_, &widgets::LabSelection::layerChanged, outliers_,
            &widgets::ActivationOutliersPanel::setLayer);
    connect(selection_, &widgets::LabSelection::layerChanged, levels_,
            &widgets::QuantLevelsPanel::setLayer);
    connect(schemes_, &widgets::SchemesPanel::currentSchemeChanged, selection_,
            &widgets::LabSelection::setScheme);
    connect(selection_, &widgets::LabSelection::schemeChanged, schemes_,
            &widgets::SchemesPanel::setCurrentScheme);
    schemes_->setCurrentScheme(selection_->scheme());

    connect(caching_, &widgets::CachingPanel::runRequested, this, &MainWindow::compareCaching);
    connect(schemes_, &widgets::SchemesPanel::weightReportRequested, this,
            [this](const QStringList& schemes) {
                SchemeReportRequest request;
                request.schemes = schemes;
                runSchemeReport(request);
            });
    connect(schemes_, &widgets::SchemesPanel::qualityReportRequested, this,
            [this](const QStringList& schemes, int perplexityTokens, int questions) {
                SchemeReportRequest request;
                request.schemes = schemes;
                request.quality = true;
                request.perplexityTokens = perplexityTokens;
                request.batteryQuestions = questions;
                runSchemeReport(request);
            });
    connect(schemes_, &widgets::SchemesPanel::cancelRequested, this,
            &MainWindow::cancelSchemeReport);
    connect(schemes_, &widgets::SchemesPanel::generationSchemeRequested, this,
            &MainWindow::setGenerationScheme);

    scroll->setWidget(controls);
    splitter_->addWidget(scroll);
    splitter_->addWidget(tabs_);
    splitter_->setStretchFactor(0, 2);
    splitter_->setStretchFactor(1, 5);
    controls->setMinimumWidth(300);
    setCentralWidget(splitter_);

    statusLabel_ = new QLabel(tr("Open a model to begin"), this);
    statusLabel_->setObjectName("statusLabel");
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 100);
    progress_->setMaximumWidth(220);
    progress_->hide();
    cancelLoadButton_ = new QToolButton(this);
    cancelLoadButton_->setText(tr("Cancel"));
    cancelLoadButton_->setToolTip(tr("Cancel loading; the current model stays"));
    cancelLoadButton_->hide();
    connect(cancelLoadButton_, &QToolButton::clicked, this, &MainWindow::cancelLoad);
    statusBar()->addWidget(statusLabel_, 1);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancelLoadButton_);
}

void MainWindow::buildMenus() {
    auto* file = menuBar()->addMenu(tr("&File"));
    openAction_ = file->addAction(tr("&Open model…"), this, &MainWindow::openModelDialog);
    openAction_->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Recent models"));
    file->addSeparator();
    exportAction_ = file->addAction(tr("&Export all panels…"), this, &MainWindow::exportAllDialog);
    exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* run = menuBar()->addMenu(tr("&Run"));
    generateAction_ = run->addAction(tr("&Generate"), this, &MainWindow::generate);
    generateAction_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    generateAction_->setShortcutContext(Qt::WindowShortcut);
    stopAction_ = run->addAction(tr("&Stop"), this, &MainWindow::stop);
    stopAction_->setShortcut(QKeySequence(Qt::Key_Escape));
    stopAction_->setShortcutContext(Qt::WindowShortcut);

    auto* view = menuBar()->addMenu(tr("&View"));
    auto* larger = view->addAction(tr("Larger text (presentation)"), this, [this] {
        setPresentationScale(settings_.presentationScale * kScaleStep);
    });
    larger->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    auto* smaller = view->addAction(tr("Smaller text"), this, [this] {
        setPresentationScale(settings_.presentationScale / kScaleStep);
    });
    smaller->setShortcut(QKeySequence::ZoomOut);
    auto* reset =
        view->addAction(tr("Normal text size"), this, [this] { setPresentationScale(1.0); });
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addSeparator();
    for (int i = 0; i < tabs_->count(); ++i) {
        auto* show =
            view->addAction(tabs_->tabText(i), this, [this, i] { tabs_->setCurrentIndex(i); });
        show->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + i)));
    }
}

QList<widgets::ChartPanel*> MainWindow::panels() const {
    return {timings_, kernels_, caching_, kvCache_, outliers_, levels_, schemes_, modelCard_};
}

void MainWindow::applySettingsToUi() {
    promptEdit_->setPlainText(settings_.prompt);
    systemEdit_->setText(settings_.systemPrompt);
    chatCheck_->setChecked(settings_.chat);
    systemEdit_->setEnabled(settings_.chat);
    greedyCheck_->setChecked(settings_.greedy);
    temperatureSpin_->setValue(settings_.temperature);
    topKSpin_->setValue(settings_.topK);
    topPSpin_->setValue(settings_.topP);
    seedSpin_->setValue(settings_.seed);
    repeatPenaltySpin_->setValue(settings_.repeatPenalty);
    maxTokensSpin_->setValue(settings_.maxTokens);
    for (auto* box :
         std::initializer_list<QWidget*>{temperatureSpin_, topKSpin_, topPSpin_, seedSpin_})
        box->setEnabled(!settings_.greedy);
    setPresentationScale(settings_.presentationScale);
    profileCheck_->setChecked(settings_.profileKernels);
    // The saved backend if it still exists, else the first entry (a Vulkan device if any).
    int index = backendBox_->findData(settings_.backend);
    if (settings_.backend.isEmpty() || index < 0) index = 0;
    backendBox_->setCurrentIndex(index);
    backendChoice_ = BackendChoice::fromKey(backendBox_->itemData(index).toString());
}

void MainWindow::readSettingsFromUi() {
    settings_.prompt = promptEdit_->toPlainText();
    settings_.systemPrompt = systemEdit_->text();
    if (chatCheck_->isEnabled()) settings_.chat = chatCheck_->isChecked();
    settings_.greedy = greedyCheck_->isChecked();
    settings_.temperature = temperatureSpin_->value();
    settings_.topK = topKSpin_->value();
    settings_.topP = topPSpin_->value();
    settings_.seed = seedSpin_->value();
    settings_.repeatPenalty = repeatPenaltySpin_->value();
    settings_.maxTokens = maxTokensSpin_->value();
    settings_.profileKernels = profileCheck_->isChecked();
    if (!factoryInjected_) settings_.backend = backendChoice_.key();
}

void MainWindow::saveSettings() {
    readSettingsFromUi();
    settings_.geometry = saveGeometry();
    settings_.windowState = saveState();
    QSettings store;
    settings_.save(store);
}

void MainWindow::updateRecentMenu() {
    recentMenu_->clear();
    for (const auto& path : settings_.recentModels)
        recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] { loadModel(path); })
            ->setToolTip(path);
    recentMenu_->setEnabled(!settings_.recentModels.isEmpty());
}

void MainWindow::updateActions() {
    const bool canGenerate = hasModel() && !isBusy() && !isLoading();
    generateAction_->setEnabled(canGenerate);
    generateButton_->setEnabled(canGenerate);
    stopAction_->setEnabled(isGenerating());
    stopButton_->setEnabled(isGenerating());
    chatCheck_->setEnabled(!hasModel() || modelHasChat_);
    progress_->setVisible(isLoading());
    cancelLoadButton_->setVisible(isLoading());
    caching_->setRunning(isComparing());
    caching_->runButton()->setEnabled(canGenerate);
    schemes_->setRunning(isReporting());
    schemes_->weightButton()->setEnabled(canGenerate);
    schemes_->qualityButton()->setEnabled(canGenerate);
}

void MainWindow::setPresentationScale(double scale) {
    settings_.presentationScale = std::clamp(scale, 0.5, 3.0);
    QFont font = baseFont_;
    font.setPointSizeF(baseFont_.pointSizeF() * settings_.presentationScale);
    centralWidget()->setFont(font);
    // The menu bar, its menus (top-level popups: they inherit nothing) and the status bar
    // scale with the rest.
    menuBar()->setFont(font);
    for (auto* menu : menuBar()->findChildren<QMenu*>()) menu->setFont(font);
    statusBar()->setFont(font);
    for (auto* panel : panels()) panel->setPresentationScale(settings_.presentationScale);
    // Give the controls the width their larger text needs; the panels keep the rest. The
    // column's minimum follows the scale too, so Ctrl+0 gives back its normal width.
    const int controlsWidth = qRound(340 * settings_.presentationScale);
    if (auto* scroll = qobject_cast<QScrollArea*>(splitter_->widget(0)))
        if (scroll->widget())
            scroll->widget()->setMinimumWidth(qRound(300 * settings_.presentationScale));
    const int total = std::max(splitter_->width(), width());
    splitter_->setSizes({controlsWidth, std::max(400, total - controlsWidth)});
}

void MainWindow::restoreModel() {
    if (!settings_.lastModel.isEmpty() && QFileInfo::exists(settings_.lastModel)) {
        loadModel(settings_.lastModel);
        return;
    }
    if (!settings_.firstStart) return;
    try {
        loadModel(QString::fromStdString(models::resolveModelPath("default").string()));
    } catch (const std::exception& error) {
        statusLabel_->setText(
            tr("Open a model with Ctrl+O (%1)").arg(QString::fromUtf8(error.what())));
    }
}

void MainWindow::openModelDialog() {
    QString start = modelPath_.isEmpty()
                        ? QString::fromStdString((models::cacheDirectory() / "models").string())
                        : QFileInfo(modelPath_).absolutePath();
    QString path = QFileDialog::getOpenFileName(
        this, tr("Open model"), start,
        tr("Models (*.gguf config.json);;GGUF files (*.gguf);;All files (*)"));
    if (path.isEmpty()) return;
    // A safetensors model is a folder: picking its config.json means the folder.
    if (QFileInfo(path).fileName() == "config.json") path = QFileInfo(path).absolutePath();
    loadModel(path);
}

void MainWindow::dropJobs() {
    if (isGenerating()) {
        stop();
        runJob_ = 0; // its answers are about the old model: drop them
        runCancel_.reset();
    }
    lastRunJob_ = 0;
    if (compareCancel_) compareCancel_->store(true);
    if (schemeCancel_) schemeCancel_->store(true);
    compareJob_ = schemeJob_ = 0;
    compareCancel_.reset();
    schemeCancel_.reset();
}

void MainWindow::loadModel(const QString& path) {
    if (path.isEmpty()) return;
    dropJobs();
    if (loadTicket_) loadTicket_->cancel();
    loadJob_ = nextJob_++;
    loadTicket_ = std::make_shared<LoadTicket>();
    loadingPath_ = path;
    progress_->setValue(0);
    statusLabel_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    updateActions();
    QMetaObject::invokeMethod(
        worker_.get(),
        [worker = worker_.get(), job = loadJob_, path, ticket = loadTicket_,
         choice = backendChoice_] { worker->loadModel(job, path, ticket, choice); },
        Qt::QueuedConnection);
}

void MainWindow::cancelLoad() {
    if (!isLoading()) return;
    if (!loadTicket_->cancel()) return; // already committed: its answer is on the way
    loadJob_ = 0;
    loadTicket_.reset();
    statusLabel_->setText(
        hasModel() ? tr("Loading cancelled; %1 stays loaded").arg(QFileInfo(modelPath_).fileName())
                   : tr("Loading cancelled"));
    updateActions();
    emit modelLoadCancelled();
}

void MainWindow::onLoadProgress(quint64 job, const QString& stage, int percent) {
    if (job != loadJob_) return;
    progress_->setValue(percent);
    statusLabel_->setText(stage);
}

void MainWindow::onModelLoaded(quint64 job, const LoadedModelInfo& info) {
    // A load the window gave up on can still have committed (its cancel came too late):
    // the worker then holds that model, so the window shows it until the newer load lands.
    const bool current = job == loadJob_;
    if (current) {
        loadJob_ = 0;
        loadTicket_.reset();
    }
    modelPath_ = info.path;
    modelHasChat_ = info.chatTemplate;
    backendName_ = info.backend;
    updateActions(); // enables the chat toggle only for a model with a chat template
    modelLabel_->setText(tr("<b>%1</b><br>%2 · backend: %3")
                             .arg(info.displayName.toHtmlEscaped(),
                                  QFileInfo(info.path).fileName().toHtmlEscaped(), info.backend));
    modelLabel_->setToolTip(info.path);
    if (!modelHasChat_)
        chatCheck_->setChecked(false);
    else
        chatCheck_->setChecked(settings_.chat);
    modelCard_->setModel(info.card);
    // Two thirds of the way up, where the chapter looks (its layer 16 of 24).
    selection_->setLayer(int(info.card->config.layers) * 2 / 3);
    timings_->setRun(nullptr);
    kvCache_->setRun(nullptr);
    outliers_->setActivations(nullptr);
    kernels_->setRun(nullptr);
    caching_->setComparison(nullptr);
    levels_->setActivations(nullptr);
    schemes_->clearReports();
    {
        const QString format = backendChoice_.weightFormat.empty()
                                   ? QString("fp16")
                                   : QString::fromStdString(backendChoice_.weightFormat);
        schemes_->setGenerationScheme(
            factoryInjected_ || backendChoice_.kind == BackendChoice::Kind::Cpu ? QString("fp32")
                                                                                : format,
            true);
    }
    settings_.lastModel = info.path;
    settings_.firstStart = false;
    settings_.addRecentModel(info.path);
    updateRecentMenu();
    saveSettings();
    if (current) statusLabel_->setText(tr("Loaded %1").arg(info.displayName));
    setWindowTitle(tr("InferScope — %1").arg(info.displayName));
    updateActions();
    if (current) emit modelLoaded(info.path);
}

void MainWindow::onLoadFailed(quint64 job, const QString& error) {
    if (job != loadJob_) return;
    loadJob_ = 0;
    loadTicket_.reset();
    updateActions();
    QString kept = hasModel() ? tr(" The previous model stays loaded.") : QString();
    statusLabel_->setText(tr("Could not load %1").arg(QFileInfo(loadingPath_).fileName()));
    showError(tr("Could not load the model"), tr("%1\n\n%2%3").arg(loadingPath_, error, kept));
    emit modelLoadFailed(error);
}

void MainWindow::onLoadCancelled(quint64) {
    // cancelLoad() already restored the window; nothing to do for the worker's echo.
}

GenerationRequest MainWindow::requestFromUi() {
    readSettingsFromUi();
    GenerationRequest request;
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
    GenerationRequest request = requestFromUi();
    runJob_ = lastRunJob_ = nextJob_++;
    runCancel_ = std::make_shared<std::atomic<bool>>(false);
    outputEdit_->clear();
    statusLabel_->setText(tr("Generating…"));
    updateActions();
    QMetaObject::invokeMethod(
        worker_.get(),
        [worker = worker_.get(), job = runJob_, request, cancel = runCancel_] {
            worker->generate(job, request, cancel);
        },
        Qt::QueuedConnection);
    return true;
}

void MainWindow::stop() {
    if (!isGenerating() || !runCancel_) return;
    runCancel_->store(true);
    statusLabel_->setText(tr("Stopping after the current token…"));
}

void MainWindow::onGenerationStarted(quint64 job, int promptTokens) {
    if (job != runJob_) return;
    statusLabel_->setText(tr("Prefill of %1 prompt tokens…").arg(promptTokens));
}

void MainWindow::onTextGenerated(quint64 job, const QString& text) {
    if (job != runJob_) return;
    outputEdit_->moveCursor(QTextCursor::End);
    outputEdit_->insertPlainText(text);
    outputEdit_->ensureCursorVisible();
}

void MainWindow::onRunProgress(quint64 job, const widgets::RunRecordPtr& run) {
    if (job != runJob_) return;
    timings_->setRun(run);
    kernels_->setRun(run);
    kvCache_->setRun(run);
    statusLabel_->setText(tr("Generating… %1 tokens").arg(run->generatedTokens));
}

void MainWindow::onActivations(quint64 job, const widgets::ActivationRecordPtr& record) {
    // The GPU's full recording comes just after its run finished: still the latest run.
    if (job == 0 || (job != runJob_ && job != lastRunJob_)) return;
    outliers_->setActivations(record);
    levels_->setActivations(record);
    // The panels had no layers before their data: now they can show the selected one.
    outliers_->setLayer(selection_->layer());
    levels_->setLayer(selection_->layer());
}

void MainWindow::onGenerationFinished(quint64 job, const widgets::RunRecordPtr& run,
                                      const QString& text) {
    if (job != runJob_) return;
    runJob_ = 0;
    runCancel_.reset();
    timings_->setRun(run);
    kernels_->setRun(run);
    kvCache_->setRun(run);
    outputEdit_->setPlainText(text);
    QLocale locale;
    statusLabel_->setText(tr("%1 %2 tokens · time to first token %3 ms · %4 tokens/s")
                              .arg(run->cancelled ? tr("Stopped after") : tr("Generated"))
                              .arg(run->generatedTokens)
                              .arg(locale.toString(run->prefillSeconds * 1e3, 'f', 1))
                              .arg(locale.toString(run->decodeTokensPerSecond(), 'f', 1)));
    updateActions();
    emit generationFinished(true);
}

void MainWindow::onGenerationFailed(quint64 job, const QString& error) {
    if (job != runJob_) return;
    runJob_ = 0;
    runCancel_.reset();
    updateActions();
    statusLabel_->setText(tr("Generation failed"));
    showError(tr("Generation failed"), error);
    emit generationFinished(false);
}

void MainWindow::setBackendChoice(const BackendChoice& choice) {
    if (factoryInjected_) return;
    int index = backendBox_->findData(choice.key());
    if (index < 0) return; // no such device here
    backendBox_->setCurrentIndex(index);
    const bool changed = !(choice == backendChoice_);
    backendChoice_ = choice;
    settings_.backend = choice.key();
    if (changed && hasModel()) loadModel(modelPath_);
}

void MainWindow::showPanel(const QString& panelId) {
    for (auto* panel : panels())
        if (panel->panelId() == panelId) tabs_->setCurrentWidget(panel);
}

bool MainWindow::compareCaching(int tokens) {
    if (!hasModel() || isBusy() || isLoading()) return false;
    GenerationRequest request = requestFromUi();
    request.maxNewTokens = tokens;
    compareJob_ = nextJob_++;
    compareCancel_ = std::make_shared<std::atomic<bool>>(false);
    statusLabel_->setText(tr("Cached vs uncached: %1 tokens each…").arg(tokens));
    updateActions();
    QMetaObject::invokeMethod(
        worker_.get(),
        [worker = worker_.get(), job = compareJob_, request, cancel = compareCancel_] {
            worker->compareCaching(job, request, cancel);
        },
        Qt::QueuedConnection);
    return true;
}

void MainWindow::onComparisonFinished(quint64 job, const widgets::CachingComparisonPtr& result) {
    if (job != compareJob_) return;
    compareJob_ = 0;
    compareCancel_.reset();
    caching_->setComparison(result);
    statusLabel_->setText(caching_->summaryText());
    updateActions();
    emit comparisonFinished(true);
}

void MainWindow::onComparisonFailed(quint64 job, const QString& error) {
    if (job != compareJob_) return;
    compareJob_ = 0;
    compareCancel_.reset();
    updateActions();
    statusLabel_->setText(tr("Cached vs uncached failed"));
    showError(tr("Cached vs uncached failed"), error);
    emit comparisonFinished(false);
}

bool MainWindow::runSchemeReport(const SchemeReportRequest& request) {
    if (!hasModel() || isBusy() || isLoading()) return false;
    schemeJob_ = nextJob_++;
    schemeCancel_ = std::make_shared<std::atomic<bool>>(false);
    statusLabel_->setText(request.quality ? tr("Measuring the schemes' quality…")
                                          : tr("Measuring the schemes' weight errors…"));
    updateActions();
    QMetaObject::invokeMethod(
        worker_.get(),
        [worker = worker_.get(), job = schemeJob_, request, cancel = schemeCancel_] {
            worker->schemeReport(job, request, cancel);
        },
        Qt::QueuedConnection);
    return true;
}

void MainWindow::cancelSchemeReport() {
    if (!isReporting()) return;
    schemeCancel_->store(true);
    schemeJob_ = 0; // whatever it still sends is dropped
    schemeCancel_.reset();
    statusLabel_->setText(tr("Scheme report cancelled"));
    updateActions();
    emit schemeReportFinished(false);
}

void MainWindow::onSchemeReportProgress(quint64 job, const QString& line, int percent) {
    if (job != schemeJob_) return;
    schemes_->setProgress(line, percent);
}

void MainWindow::onSchemeReportFinished(quint64 job, bool quality, const TablesPtr& tables) {
    if (job != schemeJob_) return;
    schemeJob_ = 0;
    schemeCancel_.reset();
    if (quality)
        schemes_->setQualityReport(*tables);
    else
        schemes_->setWeightReport(*tables);
    statusLabel_->setText(schemes_->summaryText());
    updateActions();
    emit schemeReportFinished(true);
}

void MainWindow::onSchemeReportFailed(quint64 job, const QString& error) {
    if (job != schemeJob_) return;
    schemeJob_ = 0;
    schemeCancel_.reset();
    updateActions();
    statusLabel_->setText(tr("Scheme report failed"));
    if (error != "cancelled") showError(tr("Scheme report failed"), error);
    emit schemeReportFinished(false);
}

void MainWindow::setGenerationScheme(const QString& scheme) {
    const auto format = compute::weightFormatFromName(scheme.toStdString());
    const bool onVulkan = !factoryInjected_ && backendChoice_.kind == BackendChoice::Kind::Vulkan;
    if (!format || !onVulkan) {
        schemes_->setGenerationScheme(scheme, false);
        statusLabel_->setText(
            !format
                ? tr("%1 is host-analysis only: the GPU engine has no kernel for it").arg(scheme)
                : tr("%1 runs on the Vulkan backend; the CPU reference computes in fp32")
                      .arg(scheme));
        return;
    }
    backendChoice_.weightFormat = scheme.toStdString();
    schemes_->setGenerationScheme(scheme, true);
    if (hasModel()) loadModel(modelPath_);
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

void MainWindow::exportAllDialog() {
    QString folder = QFileDialog::getExistingDirectory(this, tr("Export all panels into"));
    if (folder.isEmpty()) return;
    QString error;
    if (exportAll(folder, &error).isEmpty()) showError(tr("Export failed"), error);
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Offscreen (tests, --quit runs) nobody can close a modal box: say it on stderr instead.
    if (QGuiApplication::platformName() == "offscreen" || property("headless").toBool()) {
        qWarning().noquote() << title << ":" << message;
        return;
    }
    QMessageBox::warning(this, title, message);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    saveSettings();
    if (runCancel_) runCancel_->store(true);
    if (compareCancel_) compareCancel_->store(true);
    if (schemeCancel_) schemeCancel_->store(true);
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!firstLocalPath(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QString path = firstLocalPath(event->mimeData());
    if (path.isEmpty()) return;
    if (QFileInfo(path).fileName() == "config.json") path = QFileInfo(path).absolutePath();
    event->acceptProposedAction();
    loadModel(path);
}

} // namespace inferscope::gui
