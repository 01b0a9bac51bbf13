#include "compute/experiments/serve/ServeMetrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace inferscope::compute::experiments {

namespace {
// Latencies of a small model on a CPU Vulkan device run from milliseconds to minutes.
std::vector<double> latencyBounds() {
    return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.25, 0.5,
            0.75,  1.0,    2.5,   5.0,  7.5,   10.0, 20.0,  40.0, 80.0, 160.0};
}

std::string number(double value) {
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", value);
    return text;
}

std::string escapeLabel(const std::string& value) {
    std::string out;
    for (char c : value) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

struct Exposition {
    std::string text;
    std::string labels; // model="..."

    void family(const std::string& name, const char* type, const std::string& help) {
        text += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const std::string& name, double value, const std::string& extra = {}) {
        text +=
            name + "{" + labels + (extra.empty() ? "" : "," + extra) + "} " + number(value) + "\n";
    }
    void scalar(const std::string& name, const char* type, const std::string& help, double value) {
        family(name, type, help);
        sample(name, value);
    }
    void histogram(const std::string& name, const std::string& help, const LatencyHistogram& h) {
        family(name, "histogram", help);
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < h.counts.size(); ++i) {
            cumulative += h.counts[i];
            const double bound = i < h.bounds.size() ? h.bounds[i] : INFINITY;
            sample(name + "_bucket", double(cumulative), "le=\"" + number(bound) + "\"");
        }
        sample(name + "_sum", h.sum);
        sample(name + "_count", double(h.count));
    }
};
} // namespace

LatencyHistogram::LatencyHistogram(std::vector<double> upperBounds)
    : bounds(std::move(upperBounds)), counts(bounds.size() + 1, 0) {}

void LatencyHistogram::observe(double seconds) {
    const auto bucket =
        std::size_t(std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin());
    ++counts[bucket];
    sum += seconds;
    ++count;
}

double LatencyHistogram::quantileBound(double quantile) const {
    if (count == 0) return 0;
    const auto wanted = std::uint64_t(std::ceil(quantile * double(count)));
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        if (cumulative >= wanted)
            return i < bounds.size() ? bounds[i] : (bounds.empty() ? 0 : 2 * bounds.back());
    }
    return bounds.empty() ? 0 : 2 * bounds.back();
}

ServeMetrics::ServeMetrics()
    : timeToFirstToken(latencyBounds()), interTokenLatency(latencyBounds()),
      endToEndLatency(latencyBounds()), queueTime(latencyBounds()) {}

std::string prometheusText(const ServeMetrics& m, const std::string& modelName) {
    Exposition out;
    out.labels = "model_name=\"" + escapeLabel(modelName) + "\"";
    const std::string p = "inferscope_";
    out.scalar(p + "num_requests_running", "gauge", "Requests holding a slot.", m.running);
    out.scalar(p + "num_requests_waiting", "gauge", "Requests queued for a slot.", m.waiting);
    out.scalar(p + "num_held_sequences", "gauge",
               "Finished sequences whose KV blocks are kept for prefix sharing.", m.heldSequences);
    out.scalar(p + "slots", "gauge", "Sequences the loop runs at once (--slots).", m.slotCount);
    out.scalar(p + "kv_blocks_total", "gauge", "KV cache blocks of the engine.", m.blocksCapacity);
    out.scalar(p + "kv_blocks_used", "gauge", "KV cache blocks handed out.", m.blocksUsed());
    out.scalar(p + "kv_blocks_free", "gauge", "KV cache blocks on the free list.", m.blocksFree);
    out.scalar(p + "kv_cache_usage_perc", "gauge", "KV cache blocks in use, 0..1.",
               m.kvUsageRatio());
    out.scalar(p + "prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
               double(m.promptTokens));
    out.scalar(p + "prefix_shared_tokens_total", "counter",
               "Prompt tokens whose KV blocks were shared from another sequence.",
               double(m.sharedPromptTokens));
    out.scalar(p + "generation_tokens_total", "counter", "Tokens generated.",
               double(m.generatedTokens));
    out.scalar(p + "engine_steps_total", "counter", "Engine steps run.", double(m.steps));
    out.scalar(p + "requests_admitted_total", "counter", "Requests that took a slot.",
               double(m.requestsAdmitted));
    out.scalar(p + "requests_rejected_total", "counter",
               "Requests refused because the waiting queue was full.", double(m.requestsRejected));
    out.family(p + "request_success_total", "counter", "Requests finished, by finish reason.");
    out.sample(p + "request_success_total", double(m.finishedStop), "finished_reason=\"stop\"");
    out.sample(p + "request_success_total", double(m.finishedLength), "finished_reason=\"length\"");
    out.sample(p + "request_success_total", double(m.finishedCancelled),
               "finished_reason=\"cancelled\"");
    out.sample(p + "request_success_total", double(m.finishedError), "finished_reason=\"error\"");
    out.histogram(p + "time_to_first_token_seconds",
                  "Seconds from arrival to the first generated token.", m.timeToFirstToken);
    out.histogram(p + "inter_token_latency_seconds", "Seconds between two tokens of a request.",
                  m.interTokenLatency);
    out.histogram(p + "e2e_request_latency_seconds", "Seconds from arrival to the last token.",
                  m.endToEndLatency);
    out.histogram(p + "request_queue_time_seconds", "Seconds from arrival to a slot.", m.queueTime);
    return out.text;
}

} // namespace inferscope::compute::experiments
