#pragma once
// Chapter item 7, prefix sharing (PagedAttention): N requests that begin with one system
// prompt, run twice on the engine. Shared: the prompt's full KV blocks are prefilled once,
// forked into every sequence (Engine::forkSequence: reference counts, no copy), and each
// sequence prefills only the rest (the prompt's partial block and its own tail). Unshared:
// each request prefills everything. Then both decode greedily, so their outputs can be
// compared token by token.
#include "compute/Table.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/experiments/serving/KvBlockMap.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct PrefixSharingRun {
    std::uint32_t prefillTokens = 0; // prompt tokens computed
    double prefillSeconds = 0;
    std::uint32_t blocksAfterPrefill = 0;
    std::uint32_t blocksAtEnd = 0; // after the last decode step, before the release
    std::vector<std::vector<std::int32_t>> outputs; // per request, greedy
};

struct PrefixSharingResult {
    std::uint32_t requests = 0;
    std::uint32_t prefixTokens = 0;
    std::uint32_t sharedPositions = 0; // the prefix's full blocks, in positions
    std::uint32_t blockSize = 0;
    std::uint32_t outputTokens = 0;
    std::uint32_t tailTokens = 0; // all tails together
    PrefixSharingRun shared, unshared;
    std::uint32_t identicalOutputs = 0; // requests whose tokens are equal in both runs
    KvBlockSnapshot sharedSnapshot;     // the cache after the shared run's prefill
};

// Throws std::invalid_argument for no requests, an empty prefix or tail, no output tokens,
// more sequences than the engine holds, or requests the KV cache or context cannot hold.
// The engine is reset before and after.
PrefixSharingResult
comparePrefixSharing(Engine& engine, const std::vector<std::int32_t>& prefix,
                     const std::vector<std::vector<std::int32_t>>& tails,
                     std::uint32_t outputTokens,
                     const std::function<void(const std::string&, int)>& progress = {});

// "prefix-sharing": one row per run (with and without forkSequence).
Table prefixSharingTable(const PrefixSharingResult& result);

} // namespace inferscope::compute::experiments
