#pragma once
// Serving as a lab job (the window's Serve toggle): the session's Vulkan engine behind the
// OpenAI-compatible server (ServingLoop + OpenAiServer) until the job is cancelled, handing a
// snapshot of the loop (block map, slots, requests, metrics) to the caller a few times a
// second, so a teacher can project the cache filling while the class sends requests. The
// tables are the ones `inferscope-cli serve` prints when it stops.
#include "compute/Table.hpp"
#include "compute/experiments/serve/ServeSnapshot.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct ServeRequest {
    std::string host = "127.0.0.1";
    int port = 8080; // 0: any free port
    std::string apiKey;
    std::uint32_t slotCount = 8;
    std::uint32_t maxWaiting = 64;
    std::uint32_t contextTokens = 512; // positions per request (prompt + max_tokens)
    bool batchInvariant = false;       // ServingLoopOptions::batchInvariant
    std::chrono::milliseconds snapshotEvery{250};
    // > 0: the job itself submits this many greedy requests (two prompts in turn, so later
    // ones share the earlier ones' blocks) to the loop, and ends when they are done (the
    // window's scripted run); 0: it serves until cancelled.
    std::uint32_t scriptedRequests = 0;
    // Called on the job's thread with each new snapshot and the address served.
    std::function<void(std::shared_ptr<const ServeSnapshot>, const std::string& url)> onSnapshot;
};

struct ServeResult {
    std::string url;
    std::shared_ptr<const ServeSnapshot> last; // when the server stopped
};

// One row per request of the snapshot (the per-request table the window shows live).
Table serveRequestsTable(const ServeSnapshot& snapshot);
// Counters, gauges and latency quantile bounds of the snapshot's metrics.
Table serveMetricsTable(const ServeSnapshot& snapshot);

struct ServeLab {
    static constexpr std::string_view id = "serve";
    using Request = ServeRequest;
    using Result = ServeResult;
    // Serves until control is cancelled. Throws std::invalid_argument on the CPU reference,
    // for a host other than loopback without an API key, or slots x context beyond the
    // engine's KV cache; std::runtime_error when the address cannot be bound.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result);
};

} // namespace inferscope::compute::experiments
