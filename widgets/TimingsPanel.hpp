#pragma once
// Chapter item 4 for one run: the prefill (all prompt tokens at once, ending in the first
// generated token) against each decode step (one token each), with time to first token
// and tokens/s. It draws compute::experiments::timingsTable, the table `generate` prints.
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class TimingsPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { DecodeSteps, FirstToken, PrefillPerToken };

    explicit TimingsPanel(QWidget* parent = nullptr);
    // Follows the lab by itself: the run as it streams; cleared when a model loads.
    void attach(const PanelContext& context) override;
    void setRun(RunRecordPtr run);
    RunRecordPtr run() const { return run_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    LiveRun live_;
    void rebuild();

    RunRecordPtr run_;
    TableModel* model_;
};

} // namespace inferscope::widgets
