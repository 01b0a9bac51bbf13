#pragma once
// Chapter item 7: static vs continuous batching run for real on the engine. The chart is a
// Gantt timeline (GanttFigure): per policy a group of slot rows on one step axis, one bar per
// request in its slot, static padding hatched, idle slots blank; it fills as the engine's
// steps complete. The table holds each policy's measured figures beside the simulator's
// prediction (compute/experiments/serving/SchedulerLab). The default mix is a quick one (a
// class waits seconds, not minutes); the chapter's 64 requests are one choice away.
#include "compute/experiments/serving/SchedulerLab.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"

class QComboBox;
class QSpinBox;

namespace inferscope::widgets {

class GanttFigure;
class TableModel;

class SchedulerPanel : public LabPanel {
    Q_OBJECT
public:
    // The mixes on offer, the default first.
    enum Mix { QuickMix = 0, ChapterMix = 1 };
    static constexpr int kDefaultSlots = 4;

    explicit SchedulerPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override;
    QString emptyReason() const override;
    // Starts both policies (0: busy).
    quint64 run(compute::experiments::SchedulingRequest request);
    // The tables of a result, or a run's partial timeline alone.
    void setTables(std::vector<compute::Table> tables);
    void clear();
    compute::experiments::SchedulingRequest request() const;
    void setMix(Mix mix);
    void setSlots(int slots);
    GanttFigure* gantt() const { return gantt_; }
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    QString backend_;
    std::vector<compute::Table> tables_;
    GanttFigure* gantt_;
    quint64 runSerial_ = 0; // a partial timeline is drawn only for the latest run
    TableModel* model_;
    QSpinBox* slots_;
    QComboBox* mix_;
    QSpinBox* seed_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
