// The window's widgets, menus and settings (its jobs and status bar are in MainWindow.cpp).
#include "app/gui/ControlsColumn.hpp"
#include "app/gui/MainWindow.hpp"
#include "app/gui/StatusLine.hpp"
#include "app/gui/WheelGuard.hpp"
#include "models/LoadedModel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/ScaledDialogs.hpp"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QShortcut>
#include <QShowEvent>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QToolButton>
#include <array>

namespace inferscope::gui {

namespace {
// The presentation scales Ctrl+= and Ctrl+- step through (a factor of 1.25 went 1.25 ->
// 1.5625, so 1.5 was out of reach).
constexpr std::array kScaleSteps = {1.0, 1.25, 1.5, 1.75, 2.0};

QString firstLocalPath(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const auto& url : mime->urls())
        if (url.isLocalFile()) return url.toLocalFile();
    return {};
}
} // namespace

QComboBox* MainWindow::backendBox() const {
    return column_->backendBox();
}
QCheckBox* MainWindow::profileToggle() const {
    return column_->profileToggle();
}
QCheckBox* MainWindow::int8ActivationsToggle() const {
    return column_->int8ActivationsToggle();
}
QPlainTextEdit* MainWindow::promptEditor() const {
    return column_->promptEditor();
}
QPlainTextEdit* MainWindow::outputView() const {
    return column_->outputView();
}
QCheckBox* MainWindow::chatToggle() const {
    return column_->chatToggle();
}
QSpinBox* MainWindow::maxTokensBox() const {
    return column_->maxTokensBox();
}

void MainWindow::buildUi() {
    splitter_ = new QSplitter(Qt::Horizontal, this);
    // The controls scroll rather than squash when a large presentation scale needs more room.
    auto* scroll = new QScrollArea(splitter_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    column_ = new ControlsColumn(factoryInjected_, scroll);
    connect(column_, &ControlsColumn::openRequested, this, &MainWindow::openModelDialog);
    connect(column_, &ControlsColumn::backendPicked, this,
            [this](const QString& key) { setBackendChoice(BackendChoice::fromKey(key)); });
    connect(column_, &ControlsColumn::int8Toggled, this, &MainWindow::setInt8Activations);
    connect(column_, &ControlsColumn::generateRequested, this, &MainWindow::generate);
    connect(column_, &ControlsColumn::stopRequested, this, &MainWindow::stop);

    deck_ = new PanelDeck(splitter_);
    // The shared selection: the layer and the scheme the lab panels look at.
    selection_ = new widgets::LabSelection(this);

    scroll->setWidget(column_);
    splitter_->addWidget(scroll);
    splitter_->addWidget(deck_);
    // A wider window widens the panels; the controls keep the width their text needs.
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
    column_->setMinimumWidth(300);
    setCentralWidget(splitter_);

    statusLabel_ = new StatusLine(tr("Open a model to begin"), this);
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
    auto* open = file->addAction(tr("&Open model…"), this, &MainWindow::openModelDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Recent models"));
    file->addSeparator();
    auto* exportAll =
        file->addAction(tr("&Export all panels…"), this, &MainWindow::exportAllDialog);
    exportAll->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    // What the panels offer there (a report to write, ...).
    for (auto* panel : deck_->panels()) {
        const auto actions = panel->fileActions();
        if (actions.isEmpty()) continue;
        file->addSeparator();
        file->addActions(actions);
    }
    file->addSeparator();
    auto* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    auto* run = menuBar()->addMenu(tr("&Run"));
    generateAction_ = run->addAction(tr("&Generate"), this, &MainWindow::generate);
    generateAction_->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)});
    generateAction_->setShortcutContext(Qt::WindowShortcut);
    // A disabled action's shortcut does nothing at all; while Generate cannot run, these take
    // the keys and say why in the status bar (updateActions switches between the two).
    for (const auto& keys : generateAction_->shortcuts()) {
        auto* refused = new QShortcut(keys, this);
        refused->setObjectName("generateRefusedShortcut");
        refused->setEnabled(false);
        connect(refused, &QShortcut::activated, this, &MainWindow::generate);
        refusedGenerateShortcuts_.push_back(refused);
    }
    stopAction_ = run->addAction(tr("&Stop"), this, &MainWindow::stop);
    stopAction_->setShortcut(QKeySequence(Qt::Key_Escape));
    stopAction_->setShortcutContext(Qt::WindowShortcut);

    auto* view = menuBar()->addMenu(tr("&View"));
    auto* larger = view->addAction(tr("Larger text (presentation)"), this, [this] {
        setPresentationScale(steppedScale(settings_.presentationScale, +1));
    });
    larger->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    auto* smaller = view->addAction(tr("Smaller text"), this, [this] {
        setPresentationScale(steppedScale(settings_.presentationScale, -1));
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
            menu->addAction(deck_->panel(id)->title(), this, [this, id] { deck_->showPanel(id); });
    }
}

void MainWindow::applySettingsToUi() {
    column_->applySettings(settings_);
    setPresentationScale(settings_.presentationScale);
    // The saved backend if it still exists, else the first entry (a Vulkan device if any).
    if (settings_.backend.isEmpty() || column_->selectBackend(settings_.backend) < 0)
        backendBox()->setCurrentIndex(0);
    backendChoice_ = BackendChoice::fromKey(column_->currentBackendKey());
    backendChoice_.weightFormat = compute::kDefaultWeightFormat;
    backendChoice_.int8Activations = settings_.int8Activations;
}

void MainWindow::saveSettings() {
    column_->readSettings(settings_);
    if (!factoryInjected_) settings_.backend = backendChoice_.key();
    settings_.int8Activations = backendChoice_.int8Activations;
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
    for (auto* refused : refusedGenerateShortcuts_) refused->setEnabled(!canGenerate);
    stopAction_->setEnabled(isGenerating());
    column_->setState(canGenerate, isGenerating(), !hasModel() || modelHasChat_,
                      !factoryInjected_ && backendChoice_.kind == BackendChoice::Kind::Vulkan &&
                          !isBusy() && !isLoading());
    progress_->setVisible(isLoading());
    cancelLoadButton_->setVisible(isLoading());
}

double MainWindow::steppedScale(double scale, int direction) {
    constexpr double tolerance = 1e-6;
    if (direction > 0) {
        for (double step : kScaleSteps)
            if (step > scale + tolerance) return step;
        return std::max(scale, kScaleSteps.back());
    }
    for (auto step = kScaleSteps.rbegin(); step != kScaleSteps.rend(); ++step)
        if (*step < scale - tolerance) return *step;
    return std::min(scale, kScaleSteps.front());
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
    column_->setMinimumWidth(qRound(300 * settings_.presentationScale));
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
    // Dialogs take the scaled font of the central area (the window's own is not scaled).
    QString path = widgets::chooseFileToOpen(
        centralWidget(), tr("Open model"), start,
        tr("Models (*.gguf config.json);;GGUF files (*.gguf);;All files (*)"));
    if (path.isEmpty()) return;
    // A safetensors model is a folder: picking its config.json means the folder.
    if (QFileInfo(path).fileName() == "config.json") path = QFileInfo(path).absolutePath();
    loadModel(path);
}

void MainWindow::exportAllDialog() {
    QString folder = widgets::chooseFolder(centralWidget(), tr("Export all panels into"));
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
    widgets::showWarning(centralWidget(), title, message);
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
