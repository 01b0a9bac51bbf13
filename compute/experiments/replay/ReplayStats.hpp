#pragma once
// What a replay measured per request and in sum, with the definitions vLLM's serving
// benchmark uses: time to first token (TTFT), time per output token after the first
// TPOT = (E2EL - TTFT) / (n - 1), inter-token latencies (ITL, every gap between two streamed
// chunks), end-to-end latency (E2EL); mean, median and p99 of each; request and output-token
// throughput; goodput, the requests per second that met every SLO.
#include "compute/Table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct ReplayRecord {
    std::uint32_t index = 0;
    std::uint32_t wantedTokens = 0; // max_tokens asked
    std::uint32_t outputTokens = 0; // the server's usage, else the chunks that held text
    std::uint32_t promptTokens = 0; // the server's usage (0 when it sent none)
    double sentSeconds = 0;         // since the replay began
    double ttftSeconds = 0, e2elSeconds = 0;
    std::vector<double> itlSeconds;
    bool ok = false;
    std::string error;
    // (E2EL - TTFT) / (n - 1); 0 for fewer than two tokens.
    double tpotSeconds() const {
        return outputTokens > 1 ? (e2elSeconds - ttftSeconds) / double(outputTokens - 1) : 0;
    }
};

struct ReplaySlo {
    std::optional<double> ttftMs, tpotMs;
    bool met(const ReplayRecord& record) const;
};

struct LatencySummary {
    double mean = 0, median = 0, p99 = 0; // milliseconds
    std::size_t samples = 0;
};
// Nearest-rank percentiles (median as the mean of the middle two), in milliseconds.
LatencySummary summarizeSeconds(std::vector<double> seconds);

struct ReplaySummary {
    std::uint32_t completed = 0, failed = 0;
    double durationSeconds = 0;
    std::uint64_t outputTokens = 0, promptTokens = 0;
    double requestThroughput = 0, outputThroughput = 0, goodput = 0;
    std::uint32_t metSlo = 0;
    LatencySummary ttft, tpot, itl, e2el;
};
ReplaySummary summarizeReplay(const std::vector<ReplayRecord>& records, double durationSeconds,
                              const ReplaySlo& slo);

// "replay-summary" (one row per metric: mean, median, p99) and "replay-requests" (one row
// per request: the timeline a chart draws).
Table replaySummaryTable(const ReplaySummary& summary, const ReplaySlo& slo,
                         const std::string& title);
Table replayRequestsTable(const std::vector<ReplayRecord>& records);

} // namespace inferscope::compute::experiments
