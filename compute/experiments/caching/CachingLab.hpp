#pragma once
// Chapter item 1, generation with and without the KV cache: the same prompt and N greedy
// tokens run cached, then really uncached (every step recomputes the whole sequence), with the
// step times, the engine's multiply-accumulate counter and the peak memory of each run. The
// Caching and MACs panels draw it; `generate --compare-cache` prints its table and `macs`
// (MacsLab) its counter.
#include "compute/Table.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"
#include "compute/lab/RunRecords.hpp"

#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct CachingLab {
    static constexpr std::string_view id = "caching";
    // The prompt, and maxNewTokens greedy tokens per run (no stop tokens: both make all N).
    using Request = PromptSpec;
    using Result = CachingComparisonPtr;
    // Throws std::invalid_argument for a backend that cannot switch its cache off.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result);
};

// "cached-vs-uncached": one row per generated token: the step time cached and uncached
// (token 1: the prefill), and whether the two runs chose the same token there; a note with
// the totals, their ratio and whether the tokens are identical.
Table cachingComparisonTable(const CachingComparison& comparison);

} // namespace inferscope::compute::experiments
