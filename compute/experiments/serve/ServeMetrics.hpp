#pragma once
// What the serving loop counts, in the shape Prometheus scrapes (vLLM's names where they
// exist): counters since start, gauges as of the last step, and latency histograms of fixed
// buckets (time to first token, inter-token latency, end-to-end latency, queue time).
#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct LatencyHistogram {
    std::vector<double> bounds;        // upper bounds in seconds, ascending (+Inf implied)
    std::vector<std::uint64_t> counts; // per bucket, bounds.size() + 1 (the last: +Inf)
    double sum = 0;
    std::uint64_t count = 0;
    explicit LatencyHistogram(std::vector<double> upperBounds = {});
    void observe(double seconds);
    // The smallest bucket bound holding `quantile` of the observations (an upper estimate;
    // +Inf as the largest bound times two); 0 without observations.
    double quantileBound(double quantile) const;
};

struct ServeMetrics {
    // Counters.
    std::uint64_t promptTokens = 0;       // prompt positions of admitted requests
    std::uint64_t sharedPromptTokens = 0; // of those, forked from another sequence
    std::uint64_t generatedTokens = 0;
    std::uint64_t steps = 0;
    std::uint64_t requestsAdmitted = 0;
    std::uint64_t finishedStop = 0, finishedLength = 0, finishedCancelled = 0, finishedError = 0;
    std::uint64_t requestsRejected = 0; // queue full
    // Gauges.
    std::uint32_t slotCount = 0, running = 0, waiting = 0, heldSequences = 0;
    std::uint32_t blocksCapacity = 0, blocksFree = 0;
    std::uint32_t blocksUsed() const { return blocksCapacity - blocksFree; }
    double kvUsageRatio() const {
        return blocksCapacity ? double(blocksUsed()) / double(blocksCapacity) : 0.0;
    }
    // Histograms.
    LatencyHistogram timeToFirstToken, interTokenLatency, endToEndLatency, queueTime;
    ServeMetrics();
};

// The Prometheus text exposition (version 0.0.4) of the metrics, every family with its
// # HELP and # TYPE lines, labelled with the model's name.
std::string prometheusText(const ServeMetrics& metrics, const std::string& modelName);

} // namespace inferscope::compute::experiments
