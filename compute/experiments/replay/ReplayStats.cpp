#include "compute/experiments/replay/ReplayStats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferscope::compute::experiments {

bool ReplaySlo::met(const ReplayRecord& record) const {
    if (!record.ok) return false;
    if (ttftMs && record.ttftSeconds * 1000.0 > *ttftMs) return false;
    if (tpotMs && record.tpotSeconds() * 1000.0 > *tpotMs) return false;
    return true;
}

LatencySummary summarizeSeconds(std::vector<double> seconds) {
    LatencySummary summary;
    summary.samples = seconds.size();
    if (seconds.empty()) return summary;
    std::sort(seconds.begin(), seconds.end());
    const std::size_t n = seconds.size();
    summary.mean = 1000.0 * std::accumulate(seconds.begin(), seconds.end(), 0.0) / double(n);
    summary.median = 1000.0 * (n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2);
    const auto rank = std::size_t(std::ceil(0.99 * double(n)));
    summary.p99 = 1000.0 * seconds[std::clamp<std::size_t>(rank, 1, n) - 1];
    return summary;
}

ReplaySummary summarizeReplay(const std::vector<ReplayRecord>& records, double durationSeconds,
                              const ReplaySlo& slo) {
    ReplaySummary summary;
    summary.durationSeconds = durationSeconds;
    std::vector<double> ttft, tpot, itl, e2el;
    for (const auto& record : records) {
        if (!record.ok) {
            ++summary.failed;
            continue;
        }
        ++summary.completed;
        summary.outputTokens += record.outputTokens;
        summary.promptTokens += record.promptTokens;
        ttft.push_back(record.ttftSeconds);
        e2el.push_back(record.e2elSeconds);
        if (record.outputTokens > 1) tpot.push_back(record.tpotSeconds());
        itl.insert(itl.end(), record.itlSeconds.begin(), record.itlSeconds.end());
        if (slo.met(record)) ++summary.metSlo;
    }
    if (durationSeconds > 0) {
        summary.requestThroughput = summary.completed / durationSeconds;
        summary.outputThroughput = double(summary.outputTokens) / durationSeconds;
        summary.goodput = summary.metSlo / durationSeconds;
    }
    summary.ttft = summarizeSeconds(std::move(ttft));
    summary.tpot = summarizeSeconds(std::move(tpot));
    summary.itl = summarizeSeconds(std::move(itl));
    summary.e2el = summarizeSeconds(std::move(e2el));
    return summary;
}

Table replaySummaryTable(const ReplaySummary& s, const ReplaySlo& slo, const std::string& title) {
    Table table;
    table.id = "replay-summary";
    table.title = title;
    table.addColumn("metric")
        .addColumn("mean", "ms", 2)
        .addColumn("median", "ms", 2)
        .addColumn("p99", "ms", 2);
    table.addColumn("samples");
    auto row = [&](const char* name, const LatencySummary& l) {
        table.addRow({std::string(name), l.mean, l.median, l.p99, std::int64_t(l.samples)});
    };
    row("TTFT", s.ttft);
    row("TPOT", s.tpot);
    row("ITL", s.itl);
    row("E2EL", s.e2el);
    auto note = [&](const std::string& text) { table.notes.push_back(text); };
    note(std::to_string(s.completed) + " requests completed, " + std::to_string(s.failed) +
         " failed, in " + fixed(s.durationSeconds, 2) + " s");
    note("request throughput " + fixed(s.requestThroughput, 3) +
         " requests/s; output token throughput " + fixed(s.outputThroughput, 2) + " tokens/s (" +
         std::to_string(s.outputTokens) + " tokens)");
    if (slo.ttftMs || slo.tpotMs)
        note("goodput " + fixed(s.goodput, 3) + " requests/s: " + std::to_string(s.metSlo) +
             " requests met" + (slo.ttftMs ? " TTFT <= " + fixed(*slo.ttftMs, 0) + " ms" : "") +
             (slo.ttftMs && slo.tpotMs ? " and" : "") +
             (slo.tpotMs ? " TPOT <= " + fixed(*slo.tpotMs, 0) + " ms" : ""));
    note("TPOT = (E2EL - TTFT) / (n - 1) per request; ITL: every gap between two streamed "
         "chunks (vLLM's serving benchmark definitions)");
    return table;
}

Table replayRequestsTable(const std::vector<ReplayRecord>& records) {
    Table table;
    table.id = "replay-requests";
    table.title = "Replayed requests";
    table.addColumn("request").addColumn("sent", "s", 3).addColumn("TTFT", "ms", 1);
    table.addColumn("TPOT", "ms", 2).addColumn("E2EL", "ms", 1).addColumn("prompt tokens");
    table.addColumn("output tokens").addColumn("asked tokens").addColumn("error");
    for (const auto& r : records)
        table.addRow({std::int64_t(r.index), r.sentSeconds,
                      r.ok ? Cell(1000.0 * r.ttftSeconds) : Cell(),
                      r.ok && r.outputTokens > 1 ? Cell(1000.0 * r.tpotSeconds()) : Cell(),
                      r.ok ? Cell(1000.0 * r.e2elSeconds) : Cell(), std::int64_t(r.promptTokens),
                      std::int64_t(r.outputTokens), std::int64_t(r.wantedTokens), r.error});
    return table;
}

} // namespace inferscope::compute::experiments
