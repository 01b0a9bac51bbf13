#pragma once
// Chapter item 5 for one run: the KV cache bytes the backend holds as the sequence grows,
// beside the formula 2 (K,V) x layers x KV heads x head dim x bytes per element.
#include "widgets/ChartPanel.hpp"
#include "widgets/RunRecords.hpp"

namespace inferscope::widgets {

class TableModel;

// One row per sample: tokens held, bytes measured, and the formula at fp32 and fp16.
compute::Table kvCacheTable(const RunRecord& run);

class KvCachePanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Measured, FormulaFp32, FormulaFp16 }; // formulas drawn over the measured line

    explicit KvCachePanel(QWidget* parent = nullptr);
    void setRun(RunRecordPtr run);
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    RunRecordPtr run_;
    TableModel* model_;
};

} // namespace inferscope::widgets
