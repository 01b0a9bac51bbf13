#pragma once
// Where a step's time goes, kernel by kernel, from GPU timestamps (profiling mode: the
// timestamps put a barrier after every dispatch, so the step runs slower while it is on).
// It draws compute::experiments::kernelTimingsTable, the table `generate --timings` prints.
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class KernelTimingsPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { DecodeStep };

    explicit KernelTimingsPanel(QWidget* parent = nullptr);
    // A run without kernel timings (profiling off) keeps the last profiled run's breakdown on
    // show, marked as such; null clears the panel (a new model).
    // Follows the lab by itself: the run as it streams; cleared when a model loads.
    void attach(const PanelContext& context) override;
    QString emptyReason() const override;
    void setRun(RunRecordPtr run);
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    LiveRun live_;
    QString backend_;
    void rebuild();

    RunRecordPtr run_;
    bool fromEarlierRun_ = false; // run_ is an earlier, profiled run than the latest
    TableModel* model_;
};

} // namespace inferscope::widgets
