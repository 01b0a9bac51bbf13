#pragma once
// Chapter item 5 for one run: the KV cache bytes the backend holds as the sequence grows,
// beside the formula 2 (K,V) x layers x KV heads x head dim x bytes per element.
#include "widgets/ChartPanel.hpp"
#include "widgets/RunRecords.hpp"

namespace inferscope::widgets {

class LabJobs;
class TableModel;

// One row per sample: tokens held, bytes measured, and the formula at fp32 and fp16, then
// the bytes allocated in whole blocks and the blocks in use (paged caches; else 0).
compute::Table kvCacheTable(const RunRecord& run);
// At the run's last sample, one row per layer: bytes written and bytes allocated.
compute::Table kvCachePerLayerTable(const RunRecord& run);

class KvCachePanel : public ChartPanel {
    Q_OBJECT
public:
    // Formulas drawn over the measured line; allocated: whole blocks (a staircase).
    enum Series { Measured, FormulaFp32, FormulaFp16, Allocated };

    explicit KvCachePanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: the run as it streams; cleared when a model loads.
    void subscribe(const LabJobs& jobs);
    void setRun(RunRecordPtr run);
    TableModel* model() const { return model_; }
    TableModel* perLayerModel() const { return perLayer_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    RunRecordPtr run_;
    TableModel* model_;
    TableModel* perLayer_;
};

} // namespace inferscope::widgets
