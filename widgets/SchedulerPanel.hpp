#pragma once
// Chapter item 7: static vs continuous batching run for real on the engine. The chart is the
// timeline (step x slot): each generating slot-step a dot, neighbouring requests in a slot in
// alternating colours, padding (a finished request still holding its slot) apart; static on
// the lower slots, continuous above. The table holds each policy's measured figures beside
// the simulator's prediction (compute/experiments/serving/SchedulerLab).
#include "compute/experiments/serving/SchedulerLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QComboBox;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class SchedulerPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { StaticEven, StaticOdd, StaticPadding, ContinuousEven, ContinuousOdd };

    // The scripted run: the small mix on this many slots.
    static constexpr int kScriptSlots = 4;

    explicit SchedulerPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override;
    QString emptyReason() const override;
    // Starts both policies (0: busy).
    quint64 run(const compute::experiments::SchedulingRequest& request);
    void setTables(std::vector<compute::Table> tables);
    void clear();
    // The chapter's mix (64 requests) or a small one (16 requests, for a quick run).
    compute::experiments::SchedulingRequest request() const;
    void setSmallMix(bool small);
    void setSlots(int slots);
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    QString backend_;
    std::vector<compute::Table> tables_;
    TableModel* model_;
    QSpinBox* slots_;
    QComboBox* mix_;
    QSpinBox* seed_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
