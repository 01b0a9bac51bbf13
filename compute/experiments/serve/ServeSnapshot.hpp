#pragma once
// What the serving loop publishes after each step for a panel (or a test) to poll from any
// thread: the KV block map, which request holds which slot, one row per request (running,
// waiting, and the most recent finished ones), and the metrics. Immutable once published.
#include "compute/experiments/serve/CompletionRequest.hpp"
#include "compute/experiments/serve/ServeMetrics.hpp"
#include "compute/experiments/serving/KvBlockMap.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

enum class ServeRequestState { Waiting, Prefilling, Decoding, Finished };
std::string serveRequestStateName(ServeRequestState state);

struct ServeRequestRow {
    std::uint64_t id = 0;
    ServeRequestState state = ServeRequestState::Waiting;
    FinishReason finish = FinishReason::None;
    std::int32_t slot = -1;
    std::uint32_t promptTokens = 0;
    std::uint32_t sharedPromptTokens = 0;
    std::uint32_t generatedTokens = 0;
    std::uint32_t blocksHeld = 0; // of its block table (a shared block counts for each holder)
    double arrivalSeconds = 0;    // since the loop started
    double queueSeconds = 0;      // arrival to slot (so far, while waiting)
    double timeToFirstTokenSeconds = -1; // -1: no token yet
    double elapsedSeconds = 0;           // arrival to now, or to its end
    // Generated tokens per second after the first: (n - 1) / (last - first token), 0 below 2.
    double tokensPerSecond = 0;
};

struct ServeSnapshot {
    std::uint64_t step = 0;
    double uptimeSeconds = 0;
    std::vector<std::int64_t> slotRequests; // per slot: the request id holding it, or -1
    KvBlockSnapshot blocks;
    std::vector<ServeRequestRow> requests; // by id
    ServeMetrics metrics;
    bool batchInvariant = false; // ServingLoopOptions::batchInvariant
};

} // namespace inferscope::compute::experiments
