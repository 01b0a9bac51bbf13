#pragma once
// Chapter item 1: the same prompt and token budget generated twice, with the KV cache and
// without it (every step recomputes the whole sequence): both step-time series, the total
// time ratio, and whether the tokens are identical (they must be: caching is exact). It draws
// compute::experiments::cachingComparisonTable, which `generate --compare-cache` prints.
#include "widgets/ChartPanel.hpp"
#include "widgets/RunRecords.hpp"

class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class LabJobs;
class TableModel;

class CachingPanel : public ChartPanel {
    Q_OBJECT
public:
    enum Series { Cached, Uncached };

    explicit CachingPanel(QWidget* parent = nullptr);
    // Follows the lab's jobs by itself: each cached vs uncached comparison (cleared on a load).
    void subscribe(const LabJobs& jobs);
    void setComparison(CachingComparisonPtr comparison);
    CachingComparisonPtr comparison() const { return comparison_; }
    void setRunning(bool running);
    QSpinBox* tokensBox() const { return tokens_; }
    QPushButton* runButton() const { return run_; }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

signals:
    void runRequested(int tokens);

private:
    void rebuild();

    CachingComparisonPtr comparison_;
    TableModel* model_;
    QSpinBox* tokens_;
    QPushButton* run_;
};

} // namespace inferscope::widgets
