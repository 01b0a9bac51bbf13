#pragma once
// The inferscope window: load a model (worker thread, progress, cancel), write a prompt,
// Generate / Stop with streaming output, and the panels that fill in as the run goes.
// The lab's jobs run in widgets::LabJobs (a compute::LabSession on its own thread); the panels
// subscribe to its records themselves, the window starts, stops and drops jobs and keeps the
// status bar. Public slots and signals double as the interface the command line and tests drive.
#include "app/gui/LabTypes.hpp"
#include "app/gui/PanelDeck.hpp"
#include "app/gui/Settings.hpp"
#include "widgets/LabJobs.hpp"

#include <QMainWindow>
#include <QThread>
#include <QThreadPool>
#include <functional>
#include <memory>

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QToolButton;

namespace inferscope::widgets {
class LabSelection;
} // namespace inferscope::widgets

namespace inferscope::gui {

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
    bool isLoading() const { return jobs_->running(widgets::JobKind::Load); }
    bool isGenerating() const { return jobs_->running(widgets::JobKind::Generate); }
    bool hasModel() const { return !modelPath_.isEmpty(); }
    bool isComparing() const { return jobs_->running(widgets::JobKind::CompareCaching); }
    bool isReporting() const {
        return jobs_->running(widgets::JobKind::WeightReport) ||
               jobs_->running(widgets::JobKind::QualityReport);
    }
    bool isSwitchingScheme() const { return jobs_->running(widgets::JobKind::SwitchFormat); }
    bool isTimingAttention() const { return jobs_->running(widgets::JobKind::AttentionHead); }
    bool isComputingSoftLabels() const { return jobs_->running(widgets::JobKind::SoftLabels); }
    bool isSpeculating() const { return jobs_->running(widgets::JobKind::Speculative); }
    bool isServing() const {
        return jobs_->running(widgets::JobKind::BatchingSweep) ||
               jobs_->running(widgets::JobKind::Scheduler);
    }
    bool isBusy() const {
        return isGenerating() || isComparing() || isReporting() || isSwitchingScheme() ||
               isTimingAttention() || isComputingSoftLabels() || isServing() || isSpeculating();
    }
    BackendChoice backendChoice() const { return backendChoice_; }
    QString backendName() const { return backendName_; }

    QList<widgets::ChartPanel*> panels() const;
    PanelDeck* panelDeck() const { return deck_; }
    widgets::TimingsPanel* timingsPanel() const { return deck_->timings(); }
    widgets::KvCachePanel* kvCachePanel() const { return deck_->kvCache(); }
    widgets::ModelCardPanel* modelCardPanel() const { return deck_->modelCard(); }
    widgets::ActivationOutliersPanel* outliersPanel() const { return deck_->outliers(); }
    widgets::KernelTimingsPanel* kernelsPanel() const { return deck_->kernels(); }
    widgets::CachingPanel* cachingPanel() const { return deck_->caching(); }
    widgets::QuantLevelsPanel* levelsPanel() const { return deck_->levels(); }
    widgets::SchemesPanel* schemesPanel() const { return deck_->schemes(); }
    widgets::AttentionCostPanel* attentionPanel() const { return deck_->attention(); }
    widgets::MacCountsPanel* macCountsPanel() const { return deck_->macCounts(); }
    widgets::MemoryBudgetPanel* budgetPanel() const { return deck_->budget(); }
    widgets::SoftLabelsPanel* softLabelsPanel() const { return deck_->softLabels(); }
    widgets::SpeculativePanel* speculativePanel() const { return deck_->speculative(); }
    widgets::BatchingPanel* batchingPanel() const { return deck_->batching(); }
    widgets::SchedulerPanel* schedulerPanel() const { return deck_->scheduler(); }
    widgets::LabSelection* selection() const { return selection_; }
    QComboBox* backendBox() const { return backendBox_; }
    QCheckBox* profileToggle() const { return profileCheck_; }
    QCheckBox* int8ActivationsToggle() const { return int8Check_; }
    QPlainTextEdit* promptEditor() const { return promptEdit_; }
    QPlainTextEdit* outputView() const { return outputEdit_; }
    QCheckBox* chatToggle() const { return chatCheck_; }
    QSpinBox* maxTokensBox() const { return maxTokensSpin_; }
    QAction* generateAction() const { return generateAction_; }
    QAction* stopAction() const { return stopAction_; }
    widgets::LabJobs* jobs() const { return jobs_.get(); }
    double presentationScale() const { return settings_.presentationScale; }
    const GuiSettings& settings() const { return settings_; }

public slots:
    void loadModel(const QString& path);
    void cancelLoad();
    bool generate(); // false when there is no model or a run is going
    void stop();
    // Every panel's PNG, SVG, CSV and JSON into folder; returns the files (empty on error).
    QStringList exportAll(const QString& folder, QString* error = nullptr);
    void setPresentationScale(double scale);
    // Picks the backend (and reloads the model on it, if one is loaded). A choice without a
    // weight format keeps the one in use.
    void setBackendChoice(const BackendChoice& choice);
    // Int8 activations on the Vulkan engine (EngineOptions::int8Activations); reloads the model.
    void setInt8Activations(bool on);
    void showPanel(const QString& panelId);
    // Cached then uncached, `tokens` greedy tokens each (false: busy or no model).
    bool compareCaching(int tokens);
    // The quantization lab's weight-error or quality report (false: busy or no model).
    bool runSchemeReport(const SchemeReportRequest& request);
    void cancelSchemeReport();
    // The serving lab (chapter items 6 and 7) on the GPU engine (false: busy or no model).
    bool runBatchingSweep(const compute::BatchingRequest& request);
    bool runSchedulerComparison(const compute::SchedulingRequest& request);
    void cancelServing();
    // Generation with a lab scheme: re-packs the GPU engine's weights in place (no file read,
    // same Vulkan context) if it has that format, else says why not.
    void setGenerationScheme(const QString& scheme);
    // Chapter item 1's single head on the device at these lengths (false: busy).
    bool timeAttentionHead(const std::vector<std::uint32_t>& lengths);
    // Chapter item 13: the next-token distribution after `prompt`, and each scheme's KL from
    // it (false: busy or no model).
    bool computeSoftLabels(const QString& prompt, const QStringList& schemes);
    // Chapter item 12: the model as target and as each draft scheme on the GPU (false: busy
    // or no model).
    bool runSpeculative(const compute::SpeculativeRequest& request);
    void cancelSpeculative();

signals:
    void modelLoaded(const QString& path);
    void modelLoadFailed(const QString& error);
    void modelLoadCancelled();
    void generationFinished(bool completed); // false: failed (stopped runs complete)
    void exported(const QStringList& files);
    void comparisonFinished(bool completed);
    void schemeReportFinished(bool completed); // false: failed or cancelled
    void batchingFinished(bool completed);     // false: failed or cancelled
    void schedulerFinished(bool completed);
    // A scheme switch in place ended (false: it failed); the status bar shows its time.
    void generationSchemeSwitched(bool completed);
    void attentionHeadFinished(bool completed);
    void softLabelsFinished(bool completed);
    void speculativeFinished(bool completed); // false: failed or cancelled

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildUi();
    void buildMenus();
    void applyControlsWidth(); // the split between controls and panels for the scale
    void applySettingsToUi();
    void readSettingsFromUi();
    void saveSettings();
    void updateRecentMenu();
    void updateActions();
    void openModelDialog();
    void exportAllDialog();
    void showError(const QString& title, const QString& message);

    void subscribe(); // the window's own records: model label, output text, status bar
    void onModelLoaded(const widgets::LoadedModelPtr& model);
    void onFormatSwitched(const widgets::FormatSwitchPtr& result);
    void onJobProgress(widgets::JobKind kind, const QString& stage, int percent);
    void onJobEnded(widgets::JobKind kind, const QString& error, bool failed);
    void dropJobs(); // answers to running jobs belong to the old model
    compute::GenerationRequest requestFromUi();
    // Starts a lab job when the window is free (and, if it needs one, has a model): shows
    // `status`, calls `start`, updates the actions. False when busy.
    bool startLabJob(const QString& status, const std::function<void()>& start,
                     bool needsModel = true);
    // The status bar (and, unless cancelled, an error box) when a lab job ends.
    void reportJobEnd(const QString& what, const QString& summary, const QString& error,
                      bool failed);

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
    bool modelHasChat_ = false;
    QFont baseFont_;
    bool shownOnce_ = false;

    QLabel* modelLabel_ = nullptr;
    QPlainTextEdit* promptEdit_ = nullptr;
    QCheckBox* chatCheck_ = nullptr;
    QLineEdit* systemEdit_ = nullptr;
    QCheckBox* greedyCheck_ = nullptr;
    QDoubleSpinBox* temperatureSpin_ = nullptr;
    QSpinBox* topKSpin_ = nullptr;
    QDoubleSpinBox* topPSpin_ = nullptr;
    QSpinBox* seedSpin_ = nullptr;
    QDoubleSpinBox* repeatPenaltySpin_ = nullptr;
    QSpinBox* maxTokensSpin_ = nullptr;
    QPushButton* generateButton_ = nullptr;
    QPushButton* stopButton_ = nullptr;
    QPlainTextEdit* outputEdit_ = nullptr;
    QSplitter* splitter_ = nullptr;
    PanelDeck* deck_ = nullptr;
    widgets::LabSelection* selection_ = nullptr;
    QComboBox* backendBox_ = nullptr;
    QCheckBox* profileCheck_ = nullptr;
    QCheckBox* int8Check_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancelLoadButton_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* openAction_ = nullptr;
    QAction* generateAction_ = nullptr;
    QAction* stopAction_ = nullptr;
    QAction* exportAction_ = nullptr;
};

} // namespace inferscope::gui
