#pragma once
// Chapter item 5 for one run: the KV cache bytes the backend holds as the sequence grows,
// beside the formula 2 (K,V) x layers x KV heads x head dim x bytes per element. It draws
// compute::experiments::kvCacheGrowthTable and kvCachePerLayerTable, which `generate --kv-cache`
// prints.
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class KvCachePanel : public LabPanel {
    Q_OBJECT
public:
    // Formulas drawn over the measured line; allocated: whole blocks (a staircase).
    enum Series { Measured, FormulaFp32, FormulaFp16, Allocated };

    explicit KvCachePanel(QWidget* parent = nullptr);
    // Follows the lab by itself: the run as it streams; cleared when a model loads.
    void attach(const PanelContext& context) override;
    void setRun(RunRecordPtr run);
    TableModel* model() const { return model_; }
    TableModel* perLayerModel() const { return perLayer_; }
    std::vector<compute::Table> dataTables() const override;

private:
    LiveRun live_;
    void rebuild();

    RunRecordPtr run_;
    TableModel* model_;
    TableModel* perLayer_;
};

} // namespace inferscope::widgets
