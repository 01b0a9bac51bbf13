// The window's widgets, menus and settings (its jobs are in MainWindow.cpp).
#include "app/gui/MainWindow.hpp"

#include "compute/formats/WeightFormat.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/MacCountsPanel.hpp"
#include "widgets/MemoryBudgetPanel.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"
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
#include <QShowEvent>
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
    for (const auto& option : compute::availableBackends())
        backendBox_->addItem(QString::fromStdString(option.label),
                             BackendChoice(option.choice).key());
    backendBox_->setToolTip(
        factoryInjected_ ? tr("The backend is fixed by whoever started the window")
                         : tr("Where the transformer runs: a Vulkan device (the GPU engine) or "
                              "the plain CPU reference (the oracle); switching reloads the model"));
    backendBox_->setEnabled(!factoryInjected_);
    profileCheck_ = new QCheckBox(tr("Profile kernels (GPU timestamps)"), backendGroup);
    profileCheck_->setObjectName("profileKernels");
    profileCheck_->setToolTip(tr("Time every kernel with GPU timestamps; they put a barrier "
                                 "after each dispatch, so steps run slower while this is on"));
    int8Check_ = new QCheckBox(tr("Int8 activations (as llama.cpp's CPU backend)"), backendGroup);
    int8Check_->setObjectName("int8Activations");
    int8Check_->setToolTip(
        tr("Round each 32 activations to 8 bits and multiply integers, on the 4-bit formats "
           "where the device has the 8-lane path (lavapipe); faster prompts and batches, no "
           "longer exact to the stored weights. The backend name says where it applies; "
           "switching reloads the model"));
    backendLayout->addWidget(backendBox_);
    backendLayout->addWidget(profileCheck_);
    backendLayout->addWidget(int8Check_);
    column->addWidget(backendGroup);
    connect(backendBox_, &QComboBox::activated, this, [this](int index) {
        setBackendChoice(BackendChoice::fromKey(backendBox_->itemData(index).toString()));
    });
    connect(int8Check_, &QCheckBox::clicked, this, &MainWindow::setInt8Activations);

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

    deck_ = new PanelDeck(splitter_);

    // The shared selection: the layer and the scheme the lab panels look at.
    selection_ = new widgets::LabSelection(this);
    connect(deck_->outliers(), &widgets::ActivationOutliersPanel::layerChanged, selection_,
            &widgets::LabSelection::setLayer);
    connect(deck_->levels(), &widgets::QuantLevelsPanel::layerChanged, selection_,
            &widgets::LabSelection::setLayer);
    connect(selection_, &widgets::LabSelection::layerChanged, deck_->outliers(),
            &widgets::ActivationOutliersPanel::setLayer);
    connect(selection_, &widgets::LabSelection::layerChanged, deck_->levels(),
            &widgets::QuantLevelsPanel::setLayer);
    connect(deck_->schemes(), &widgets::SchemesPanel::currentSchemeChanged, selection_,
            &widgets::LabSelection::setScheme);
    connect(selection_, &widgets::LabSelection::schemeChanged, deck_->schemes(),
            &widgets::SchemesPanel::setCurrentScheme);
    deck_->schemes()->setCurrentScheme(selection_->scheme());

    connect(deck_->caching(), &widgets::CachingPanel::runRequested, this,
            &MainWindow::compareCaching);
    connect(deck_->attention(), &widgets::AttentionCostPanel::runRequested, this,
            &MainWindow::timeAttentionHead);
    connect(deck_->softLabels(), &widgets::SoftLabelsPanel::runRequested, this,
            [this](const QString& prompt) {
                computeSoftLabels(prompt, {"int8-row", "int4-g128", "nf4-b64", "int4-tensor"});
            });
    connect(deck_->schemes(), &widgets::SchemesPanel::weightReportRequested, this,
            [this](const QStringList& schemes) {
                SchemeReportRequest request;
                request.schemes = schemes;
                runSchemeReport(request);
            });
    connect(deck_->schemes(), &widgets::SchemesPanel::qualityReportRequested, this,
            [this](const QStringList& schemes, int perplexityTokens, int questions) {
                SchemeReportRequest request;
                request.schemes = schemes;
                request.quality = true;
                request.perplexityTokens = perplexityTokens;
                request.batteryQuestions = questions;
                runSchemeReport(request);
            });
    connect(deck_->schemes(), &widgets::SchemesPanel::cancelRequested, this,
            &MainWindow::cancelSchemeReport);
    connect(deck_->schemes(), &widgets::SchemesPanel::generationSchemeRequested, this,
            &MainWindow::setGenerationScheme);
    connect(deck_->batching(), &widgets::BatchingPanel::sweepRequested, this,
            &MainWindow::runBatchingSweep);
    connect(deck_->batching(), &widgets::BatchingPanel::cancelRequested, this,
            &MainWindow::cancelServing);
    connect(deck_->scheduler(), &widgets::SchedulerPanel::scheduleRequested, this,
            &MainWindow::runSchedulerComparison);
    connect(deck_->scheduler(), &widgets::SchedulerPanel::cancelRequested, this,
            &MainWindow::cancelServing);
    connect(deck_->speculative(), &widgets::SpeculativePanel::runRequested, this,
            &MainWindow::runSpeculative);
    connect(deck_->speculative(), &widgets::SpeculativePanel::cancelRequested, this,
            &MainWindow::cancelSpeculative);

    scroll->setWidget(controls);
    splitter_->addWidget(scroll);
    splitter_->addWidget(deck_);
    // A wider window widens the panels; the controls keep the width their text needs.
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
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
    // On a projector the panels may need the whole width: the controls column folds away.
    auto* controls = view->addAction(tr("Show the controls column"));
    controls->setCheckable(true);
    controls->setChecked(true);
    controls->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Backslash));
    connect(controls, &QAction::toggled, splitter_->widget(0), &QWidget::setVisible);
    view->addSeparator();
    // One submenu per group of panels; Alt+1.. brings a group to the front.
    const auto groups = deck_->groups();
    for (qsizetype g = 0; g < groups.size(); ++g) {
        auto* menu = view->addMenu(QString(groups[g].label).replace("&&", "&"));
        if (g < 9)
            menu->menuAction()->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + int(g))));
        connect(menu->menuAction(), &QAction::triggered, this,
                [this, g] { deck_->showGroup(int(g)); });
        for (const auto& id : groups[g].panelIds)
            for (auto* panel : deck_->panels())
                if (panel->panelId() == id)
                    menu->addAction(panel->title(), this, [this, id] { deck_->showPanel(id); });
    }
}

QList<widgets::ChartPanel*> MainWindow::panels() const {
    return deck_->panels();
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
    backendChoice_.weightFormat = compute::kDefaultWeightFormat;
    backendChoice_.int8Activations = settings_.int8Activations;
    int8Check_->setChecked(settings_.int8Activations);
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
    settings_.int8Activations = backendChoice_.int8Activations;
}

void MainWindow::saveSettings() {
    readSettingsFromUi();
    settings_.geometry = saveGeometry();
    settings_.windowState = saveState();
    settings_.saveInBackground(settingsWriter_);
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
    int8Check_->setEnabled(!factoryInjected_ &&
                           backendChoice_.kind == BackendChoice::Kind::Vulkan && !isBusy() &&
                           !isLoading());
    progress_->setVisible(isLoading());
    cancelLoadButton_->setVisible(isLoading());
    deck_->caching()->setRunning(isComparing());
    deck_->caching()->runButton()->setEnabled(canGenerate);
    deck_->attention()->setRunning(isTimingAttention());
    deck_->attention()->runButton()->setEnabled(!isBusy() && !isLoading());
    deck_->softLabels()->setRunning(isComputingSoftLabels());
    deck_->softLabels()->runButton()->setEnabled(canGenerate);
    deck_->schemes()->setRunning(isReporting());
    deck_->schemes()->weightButton()->setEnabled(canGenerate);
    deck_->schemes()->qualityButton()->setEnabled(canGenerate);
    deck_->batching()->setRunning(jobs_->running(widgets::JobKind::BatchingSweep));
    deck_->batching()->runButton()->setEnabled(canGenerate);
    deck_->scheduler()->setRunning(jobs_->running(widgets::JobKind::Scheduler));
    deck_->scheduler()->runButton()->setEnabled(canGenerate);
    deck_->speculative()->setRunning(isSpeculating());
    deck_->speculative()->runButton()->setEnabled(canGenerate);
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
    applyControlsWidth();
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // A split set before the window had its final size was stretched with it: set it again.
    if (!shownOnce_) applyControlsWidth();
    shownOnce_ = true;
}

void MainWindow::applyControlsWidth() {
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
