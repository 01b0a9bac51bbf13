#pragma once
// Chapter item 1: the same prompt and token budget generated twice, with the KV cache and
// without it (every step recomputes the whole sequence): both step-time series, the total
// time ratio, and whether the tokens are identical (they must be: caching is exact). It runs
// compute::experiments::CachingLab on the window's prompt and draws its table, which
// `generate --compare-cache` prints.
#include "widgets/JobControls.hpp"
#include "widgets/LabPanel.hpp"
#include "widgets/RunRecords.hpp"

class QPushButton;
class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class CachingPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { Cached, Uncached };

    // The scripted run's tokens per run.
    static constexpr int kScriptTokens = 6;

    explicit CachingPanel(QWidget* parent = nullptr);
    // Each cached vs uncached comparison (cleared on a load); runs its own.
    void attach(const PanelContext& context) override;
    std::optional<quint64> runScripted() override { return run(kScriptTokens); }
    // Runs the window's prompt cached, then uncached, `tokens` greedy tokens each (0: busy).
    quint64 run(int tokens);
    void setComparison(CachingComparisonPtr comparison);
    CachingComparisonPtr comparison() const { return comparison_; }
    QSpinBox* tokensBox() const { return tokens_; }
    QPushButton* runButton() const { return controls_->runButton(); }
    QPushButton* cancelButton() const { return controls_->cancelButton(); }
    TableModel* model() const { return model_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();

    PanelContext context_;
    CachingComparisonPtr comparison_;
    TableModel* model_;
    QSpinBox* tokens_;
    JobControls* controls_;
};

} // namespace inferscope::widgets
