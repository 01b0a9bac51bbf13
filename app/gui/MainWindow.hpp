#pragma once
// The inferscope window: load a model (worker thread, progress, cancel), write a prompt,
// Generate / Stop with streaming output, and the panels of the registry (app/gui/PanelRegistry),
// which follow the lab's records and run their own jobs. The window owns the job runner
// (widgets::LabJobs), the backend choice and the status bar; it never names a panel or a lab.
// Public slots and signals double as the interface the command line and tests drive.
#include "app/gui/LabTypes.hpp"
#include "app/gui/PanelDeck.hpp"
#include "app/gui/Settings.hpp"
#include "widgets/LabJobs.hpp"

#include <QMainWindow>
#include <QThreadPool>
#include <memory>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QShortcut;
class QSpinBox;
class QSplitter;
class QToolButton;

namespace inferscope::widgets {
class LabSelection;
} // namespace inferscope::widgets

namespace inferscope::gui {

class ControlsColumn;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // An empty factory: the backend selector decides (Vulkan when a device exists); a given
    // factory (tests) replaces the selector's choice.
    explicit MainWindow(BackendFactory factory = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The model named in the settings, or on first start the default model if set-up placed it.
    void restoreModel();
    QString modelPath() const { return modelPath_; }
    bool isLoading() const { return jobs_->running(widgets::kLoadJob); }
    bool isGenerating() const { return jobs_->running(widgets::kGenerateJob); }
    bool hasModel() const { return !modelPath_.isEmpty(); }
    bool isBusy() const { return jobs_->busy(); } // a job other than a load is running
    BackendChoice backendChoice() const { return backendChoice_; }
    QString backendName() const { return backendName_; }

    QList<widgets::LabPanel*> panels() const { return deck_->panels(); }
    widgets::LabPanel* panel(const QString& id) const { return deck_->panel(id); }
    template <class Panel> Panel* panel(const QString& id) const {
        return qobject_cast<Panel*>(deck_->panel(id));
    }
    PanelDeck* panelDeck() const { return deck_; }
    widgets::LabSelection* selection() const { return selection_; }
    ControlsColumn* controls() const { return column_; }
    QComboBox* backendBox() const;
    QCheckBox* profileToggle() const;
    QCheckBox* int8ActivationsToggle() const;
    QPlainTextEdit* promptEditor() const;
    QPlainTextEdit* outputView() const;
    QCheckBox* chatToggle() const;
    QSpinBox* maxTokensBox() const;
    QAction* generateAction() const { return generateAction_; }
    QAction* stopAction() const { return stopAction_; }
    widgets::LabJobs* jobs() const { return jobs_.get(); }
    double presentationScale() const { return settings_.presentationScale; }
    const GuiSettings& settings() const { return settings_; }

public slots:
    void loadModel(const QString& path);
    void cancelLoad();
    bool generate(); // false when there is no model or a job is running
    void stop();
    // Every panel's PNG, SVG, CSV and JSON into folder; returns the files (empty on error).
    QStringList exportAll(const QString& folder, QString* error = nullptr);
    void setPresentationScale(double scale);

public:
    // The scale Ctrl+= (direction +1) or Ctrl+- (-1) goes to from scale: the next of 1.0,
    // 1.25, 1.5, 1.75, 2.0 (a scale between steps goes to its neighbour; the ends stay).
    static double steppedScale(double scale, int direction);
public slots:
    // Picks the backend (and reloads the model on it, if one is loaded). A choice without a
    // weight format keeps the one in use.
    void setBackendChoice(const BackendChoice& choice);
    // Int8 activations on the Vulkan engine (EngineOptions::int8Activations); reloads the model.
    void setInt8Activations(bool on);
    void showPanel(const QString& panelId);
    // Generation with a weight format: re-packs the GPU engine's weights in place (no file read,
    // same Vulkan context) if it has that format, else says why not. True: the GPU runs it.
    bool setGenerationScheme(const QString& scheme);

signals:
    void modelLoaded(const QString& path);
    void modelLoadFailed(const QString& error);
    void modelLoadCancelled();
    void generationFinished(bool completed); // false: failed (stopped runs complete)
    void exported(const QStringList& files);
    // A scheme switch in place ended (false: it failed); the status bar shows its time.
    void generationSchemeSwitched(bool completed);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // MainWindowUi.cpp: the widgets, menus and settings.
    void buildUi();
    void buildMenus();
    void applyControlsWidth(); // the split between controls and panels for the scale
    void applySettingsToUi();
    void saveSettings();
    void updateRecentMenu();
    void updateActions();
    void openModelDialog();
    void exportAllDialog();
    void showError(const QString& title, const QString& message);

    // MainWindow.cpp: the session's jobs and the status bar.
    void subscribe();
    void onModelLoaded(const widgets::LoadedModelPtr& model);
    void onFormatSwitched(const widgets::FormatSwitchPtr& result);
    void onJobEnded(const QString& kind, const QString& error, bool failed);
    void onLabJobEnded(widgets::LabPanel* panel, const QString& what, bool ok,
                       const QString& error);
    void dropJobs();                  // answers to running jobs belong to the old model
    QString whyGenerateWaits() const; // the status line when Generate cannot run now

    GuiSettings settings_;
    // Writes the settings file off the GUI thread, one write at a time and in order; its
    // destructor waits for the last one.
    QThreadPool settingsWriter_;
    std::unique_ptr<widgets::LabJobs> jobs_;
    bool factoryInjected_ = false;
    // The Vulkan engine's weight format starts as compute::kDefaultWeightFormat.
    BackendChoice backendChoice_;
    QString backendName_;
    compute::RunRecordPtr lastRun_; // for the status bar
    QString loadedText_;            // the status once the current load ends
    QString modelPath_, loadingPath_;
    QString displayName_;
    QString generationFormat_; // the weight format generation runs with now
    bool modelHasChat_ = false;
    QFont baseFont_;
    bool shownOnce_ = false;

    ControlsColumn* column_ = nullptr;
    QSplitter* splitter_ = nullptr;
    PanelDeck* deck_ = nullptr;
    widgets::LabSelection* selection_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancelLoadButton_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* generateAction_ = nullptr;
    QAction* stopAction_ = nullptr;
    QList<QShortcut*> refusedGenerateShortcuts_;
};

} // namespace inferscope::gui
