#pragma once
// Replays a request mix against any OpenAI-compatible server (InferScope's own `serve`,
// llama.cpp's server, vLLM, SGLang) over HTTP, streaming each answer: requests arrive as a
// Poisson process at a given rate (seeded) or at a fixed concurrency; each one's TTFT, ITL
// and E2EL are timed at the client (ReplayStats), and the server's /metrics is read before
// and after when it answers.
#include "compute/experiments/replay/ReplayStats.hpp"
#include "compute/experiments/serving/RequestMix.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct ReplayRequest {
    std::string url;               // http://host:port, optionally ending in /v1
    std::vector<MixEntry> mix;     // prompt and max tokens per request, in arrival order
    double rate = 0;               // requests/s (Poisson); 0: fixed concurrency
    std::uint32_t concurrency = 1; // with rate 0
    std::uint64_t seed = 1;        // the arrival times
    std::string model;             // empty: the first model /v1/models lists
    std::string apiKey;            // sent as Authorization: Bearer KEY
    ReplaySlo slo;
    bool ignoreEos = true; // ask for exactly the mix's tokens (servers that know ignore_eos)
    double timeoutSeconds = 600;
};

struct ReplayResult {
    std::string model;
    std::vector<ReplayRecord> records;
    double durationSeconds = 0;
    ReplaySummary summary;
    // The server's Prometheus samples ("name{labels}" -> value) before and after; empty when
    // it has no /metrics.
    std::map<std::string, double> metricsBefore, metricsAfter;
};

// The chapter's mix (64 requests, median 18, longest 231 output tokens, 1,874 in total; the
// total scaled to another count), each with a short prompt of its own.
std::vector<MixEntry> chapterMix(std::uint32_t requests, std::uint64_t seed);

// Samples of a Prometheus text exposition: "name{labels}" -> value (comments skipped).
std::map<std::string, double> parsePrometheusSamples(const std::string& text);

// Throws std::invalid_argument for a URL httplib cannot use or an empty mix, and
// std::runtime_error when the server does not answer /v1/models without a model given.
ReplayResult runReplay(const ReplayRequest& request,
                       const std::function<void(const std::string&)>& progress = {});

// "replay-server-metrics": the counters and gauges that changed, before, after and delta.
Table replayServerMetricsTable(const ReplayResult& result);

} // namespace inferscope::compute::experiments
