#include "compute/experiments/run/RunTables.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace inferscope::compute::experiments {

Table timingsTable(const RunRecord& run) {
    Table t;
    t.id = "timings";
    t.title = "Prefill and decode step times (" + run.backend + ")";
    t.addColumn("phase")
        .addColumn("tokens fed")
        .addColumn("sequence length")
        .addColumn("generated token")
        .addColumn("time", "ms", 3);
    if (run.generatedTokens == 0 && run.prefillSeconds <= 0) return t;
    t.addRow({std::string("prefill"), run.promptTokens, run.promptTokens, std::int64_t{0},
              run.prefillSeconds * 1e3});
    for (std::size_t i = 0; i < run.stepSeconds.size(); ++i) {
        auto step = static_cast<std::int64_t>(i);
        t.addRow({std::string("decode"), std::int64_t{1}, run.promptTokens + step + 1, step + 1,
                  run.stepSeconds[i] * 1e3});
    }
    const double decodeTotal = std::accumulate(run.stepSeconds.begin(), run.stepSeconds.end(), 0.0);
    char note[200];
    std::snprintf(note, sizeof note,
                  "time to first token %.1f ms; prefill %.1f tokens/s; decode %.2f tokens/s "
                  "(%zu steps, %.1f ms)",
                  run.prefillSeconds * 1e3, run.prefillTokensPerSecond(),
                  run.decodeTokensPerSecond(), run.stepSeconds.size(), decodeTotal * 1e3);
    t.notes.push_back(note);
    if (run.warm)
        t.notes.push_back("pipelines warmed by an untimed run before this one (not counted)");
    return t;
}

Table kernelTimingsTable(const RunRecord& run) {
    Table t;
    t.id = "kernel-timings";
    t.title = "GPU time per kernel (" + run.backend + ")";
    t.addColumn("kernel")
        .addColumn("prefill dispatches")
        .addColumn("prefill", "us", 1)
        .addColumn("decode dispatches")
        .addColumn("decode step", "us", 1)
        .addColumn("decode share", "%", 1)
        .addColumn("decode mean", "us", 1)
        .addColumn("decode sd", "us", 1);
    // Kernels in the order the step runs them: the decode step's order, then prefill-only ones.
    std::vector<std::string> order;
    for (const auto* list : {&run.decodeKernels, &run.prefillKernels})
        for (const auto& k : *list)
            if (std::find(order.begin(), order.end(), k.kernel) == order.end())
                order.push_back(k.kernel);
    double decodeTotal = 0;
    for (const auto& k : run.decodeKernels) decodeTotal += k.microseconds;
    auto find = [](const std::vector<KernelTime>& list,
                   const std::string& name) -> const KernelTime* {
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const KernelTime& k) { return k.kernel == name; });
        return it == list.end() ? nullptr : &*it;
    };
    // The total holds every profiled decode step, one per recorded step time.
    const auto decodeSteps = static_cast<double>(run.stepSeconds.size());
    const KernelTime none;
    for (const auto& name : order) {
        const auto* prefill = find(run.prefillKernels, name);
        const auto* decode = find(run.decodeKernels, name);
        const auto* total = find(run.decodeKernelsTotal, name);
        if (!prefill) prefill = &none;
        if (!decode) decode = &none;
        t.addRow({name, std::int64_t{prefill->dispatches}, prefill->microseconds,
                  std::int64_t{decode->dispatches}, decode->microseconds,
                  decodeTotal > 0 ? 100.0 * decode->microseconds / decodeTotal : 0.0,
                  total && decodeSteps > 0 ? Cell(total->microseconds / decodeSteps) : Cell{},
                  total && total->steps >= 2 ? Cell(total->stepStandardDeviation()) : Cell{}});
    }
    if (!run.decodeKernelsTotal.empty() && run.stepSeconds.size() >= 2)
        t.notes.push_back("decode mean and sd: over the run's " +
                          std::to_string(run.stepSeconds.size()) +
                          " decode steps (sd: the step-to-step spread); kernels whose means "
                          "differ by less than their spread are not ranked by one run");
    return t;
}

Table kvCacheGrowthTable(const RunRecord& run) {
    Table t;
    t.id = "kv-cache-growth";
    t.title = "KV cache bytes as the sequence grows (" + run.backend + ")";
    t.addColumn("tokens")
        .addColumn("measured", "bytes")
        .addColumn("formula fp32", "bytes")
        .addColumn("formula fp16", "bytes")
        .addColumn("allocated", "bytes")
        .addColumn("blocks in use");
    for (const auto& sample : run.kvSamples)
        t.addRow({sample.tokens, static_cast<std::int64_t>(sample.bytes),
                  static_cast<std::int64_t>(run.config.kvBytesPerToken(4)) * sample.tokens,
                  static_cast<std::int64_t>(run.config.kvBytesPerToken(2)) * sample.tokens,
                  static_cast<std::int64_t>(sample.allocatedBytes),
                  static_cast<std::int64_t>(sample.usedBlocks)});
    const auto& c = run.config;
    t.notes.push_back("formula: 2 x " + std::to_string(c.layers) + " layers x " +
                      std::to_string(c.kvHeads) + " KV heads x " + std::to_string(c.headDim) +
                      " head dim x bytes per element");
    return t;
}

Table kvCachePerLayerTable(const RunRecord& run) {
    Table t;
    t.id = "kv-cache-per-layer";
    t.title = "KV cache per layer at the last sample (" + run.backend + ")";
    t.addColumn("layer").addColumn("written", "bytes").addColumn("allocated", "bytes");
    for (std::size_t layer = 0; layer < run.kvUsedPerLayer.size(); ++layer)
        t.addRow(
            {static_cast<std::int64_t>(layer), static_cast<std::int64_t>(run.kvUsedPerLayer[layer]),
             static_cast<std::int64_t>(
                 layer < run.kvAllocatedPerLayer.size() ? run.kvAllocatedPerLayer[layer] : 0)});
    return t;
}

} // namespace inferscope::compute::experiments
