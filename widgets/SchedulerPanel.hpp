#pragma once
// Chapter item 7: static vs continuous batching run for real on the engine. The chart is the
// timeline (step x slot): each generating slot-step a dot, neighbouring requests in a slot in
// alternating colours, padding (a finished request still holding its slot) apart; static on
// the lower slots, continuous above. The table holds each policy's measured figures beside
// the simulator's prediction (experiments/Scheduler).
#include "compute/session/LabSession.hpp"
#include "widgets/ChartPanel.hpp"
#include "widgets/JobControls.hpp"

class QComboBox;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class SchedulerPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { StaticEven, StaticOdd, StaticPadding, ContinuousEven, ContinuousOdd };

    explicit SchedulerPanel(QWidget* parent = nullptr);
    void subscribe(const LabJobs& jobs);
    void setTables(std::vector<compute::Table> tables);
    void clear();
    void setRunning(bool running) { controls_->setRunning(running); }
    void setProgress(const QString& line) { controls_->setProgress(line); }
    // The chapter's mix (64 requests) or a small one (16 requests, for a quick run).
    compute::SchedulingRequest request() const;
    void setSmallMix(bool small);
    void setSlots(int slots);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void scheduleRequested(const compute::SchedulingRequest& request);
    void cancelRequested();

private:
    std::vector<compute::Table> tables_;
    TableModel* model_;
    QSpinBox* slots_;
    QComboBox* mix_;
    QSpinBox* seed_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
