#pragma once
// Chapter items 2 and 3: multiply-accumulates to generate T tokens, cached vs uncached,
// attention and projections apart, on a log-log chart from the formula (for the loaded
// model's shape); after a cached-vs-uncached run, the engine's per-step counter against the
// formula with the measured step times, and the peak memory of both runs.
#include "widgets/LabJobs.hpp"
#include "widgets/LabPanel.hpp"

#include <optional>

class QSpinBox;

namespace inferscope::widgets {

class TableModel;

class MacCountsPanel : public LabPanel {
    Q_OBJECT
public:
    enum Series { CachedAttention, UncachedAttention, CachedProjections, UncachedProjections };

    explicit MacCountsPanel(QWidget* parent = nullptr);
    void attach(const PanelContext& context) override;
    void setModelConfig(std::optional<models::ModelConfig> config);
    void setComparison(compute::CachingComparisonPtr comparison);
    QSpinBox* generatedBox() const { return generated_; }
    TableModel* counterModel() const { return counter_; }
    std::vector<compute::Table> dataTables() const override;

private:
    void rebuild();
    std::uint64_t promptTokens() const;

    std::optional<models::ModelConfig> config_;
    compute::CachingComparisonPtr comparison_;
    std::vector<compute::Table> tables_;
    TableModel* counter_;
    TableModel* peak_;
    QSpinBox* generated_;
};

} // namespace inferscope::widgets
