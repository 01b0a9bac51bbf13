#pragma once
// Chapter items 8 and 11 side by side: the weight-error report and the quality report joined
// by scheme, as the schemes panel draws it.
#include "compute/Table.hpp"

#include <vector>

namespace inferscope::compute::experiments {

// "scheme-comparison": bits/weight, mean and worst relative weight error (%), then the quality
// columns (perplexity, battery, agreement) where measured, named for what they count.
Table schemeComparisonTable(const std::vector<Table>& weightTables,
                            const std::vector<Table>& qualityTables);

} // namespace inferscope::compute::experiments
