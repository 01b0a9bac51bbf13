#pragma once
// Chapter items 2 and 3: what the KV cache saves, counted. Multiply-accumulates from the
// formula (models/OperationCounts) for T generated tokens after a prompt of P, the engine's
// own per-step counter beside the formula for a real cached-vs-uncached run, and the peak
// device memory each run needed beyond the resident weights.
#include "compute/Table.hpp"
#include "compute/lab/RunRecords.hpp"
#include "models/ModelConfig.hpp"

#include <cstdint>
#include <vector>

namespace inferscope::compute::experiments {

// 1, 2, 4, ... up to `generated` (and `generated` itself): the rows of the growth table.
std::vector<std::uint64_t> doublingCounts(std::uint64_t generated);

// Per T: MACs cached and uncached, projections and attention apart, with the ratios. The
// uncached attention grows as T^3, the cached as T^2; projections as T^2 and T.
Table macGrowthTable(const models::ModelConfig& config, std::uint64_t prompt,
                     const std::vector<std::uint64_t>& generatedCounts);

// One row per step of a cached-vs-uncached run (the prefill, then each decode step): the
// measured times, the engine's counter and the formula for that step, and whether they agree.
// Throws std::invalid_argument when the run carries no counter (a backend that does not count).
Table macCounterTable(const models::ModelConfig& config, const CachingComparison& run);
// True when every step's counter equals the formula, both ways.
bool macCounterAgrees(const models::ModelConfig& config, const CachingComparison& run);

// Peak memory beyond the weights, cached vs uncached (Vulkan engine runs only): KV blocks at
// the fullest step, activation rows of the largest chunk, and what eager attention (a full
// fp32 score matrix per head, one layer at a time) would add, from the formula.
Table peakMemoryTable(const models::ModelConfig& config, const CachingComparison& run);

} // namespace inferscope::compute::experiments
