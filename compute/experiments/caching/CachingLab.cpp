#include "compute/experiments/caching/CachingLab.hpp"

#include "compute/engine/Engine.hpp"
#include "compute/engine/Generation.hpp"

#include <algorithm>
#include <cstdio>

namespace inferscope::compute::experiments {

namespace {
// Peak memory of the run just made, from the engine's own accounting (Vulkan only).
std::optional<PeakMemory> peakOf(Engine* engine) {
    if (!engine) return std::nullopt;
    const auto m = engine->memory();
    PeakMemory peak;
    peak.weightBytes = m.weightBytes;
    peak.kvBytes = m.peakKvAllocatedBytes;
    peak.activationRows = m.peakActivationRows;
    peak.activationBytesPerRow = m.activationBytesPerRow;
    peak.reservedWithoutWeights = m.deviceBytes - m.weightBytes;
    return peak;
}
} // namespace

CachingLab::Result CachingLab::run(LabContext& lab, const Request& request,
                                   const JobControl& control) {
    auto& backend = lab.backend();
    auto* cache = backend.cachingSwitch();
    if (!cache)
        throw std::invalid_argument("the " + backend.name() +
                                    " backend cannot switch its cache off");
    auto* engine = backend.gpuEngine();
    const auto ids = lab.promptIds(request);
    GenerationOptions options;
    options.maxNewTokens = request.maxNewTokens;
    options.sampling.greedy = true;  // identical tokens are only expected when greedy
    options.cancel = control.cancel; // no stop tokens: both runs make all N tokens
    if (engine) engine->setProbes({});

    auto comparison = std::make_shared<CachingComparison>();
    comparison->promptTokens = static_cast<std::int64_t>(ids.size());
    auto startRun = [&](bool cached) {
        cache->setCached(cached);
        backend.reset();
        if (engine) engine->resetPeakMemory();
    };
    control.report("Cached run…", 10);
    startRun(true);
    const auto cached = compute::generate(backend, ids, options);
    comparison->cachedPeak = peakOf(engine);
    comparison->cachedStepMacs = cached.stepMacs;
    comparison->backend = backend.name();
    comparison->cachedPrefillSeconds = cached.prefillSeconds;
    comparison->cachedStepSeconds = cached.stepSeconds;
    comparison->cachedTokens = cached.generatedIds;
    comparison->cancelled = cached.cancelled;
    if (!cached.cancelled) {
        control.report("Uncached run (recomputes the sequence each step)…", 40);
        GenerationResult uncached;
        try {
            startRun(false);
            uncached = compute::generate(backend, ids, options);
        } catch (...) {
            cache->setCached(true);
            throw;
        }
        comparison->backend += " vs " + backend.name();
        cache->setCached(true);
        comparison->uncachedPrefillSeconds = uncached.prefillSeconds;
        comparison->uncachedStepSeconds = uncached.stepSeconds;
        comparison->uncachedTokens = uncached.generatedIds;
        comparison->uncachedStepMacs = uncached.stepMacs;
        comparison->uncachedPeak = peakOf(engine);
        comparison->cancelled = uncached.cancelled;
    }
    backend.reset();
    return comparison;
}

std::vector<Table> CachingLab::tables(const Result& result) {
    if (!result) return {};
    return {cachingComparisonTable(*result)};
}

Table cachingComparisonTable(const CachingComparison& c) {
    Table t;
    t.id = "cached-vs-uncached";
    t.title = "Cached vs uncached generation (" + c.backend + ")";
    t.addColumn("generated token")
        .addColumn("cached", "ms", 3)
        .addColumn("uncached", "ms", 3)
        .addColumn("same token");
    const std::size_t tokens = std::max(c.cachedTokens.size(), c.uncachedTokens.size());
    auto step = [](double prefill, const std::vector<double>& steps, std::size_t i) -> Cell {
        if (i == 0) return prefill * 1e3;
        if (i - 1 < steps.size()) return steps[i - 1] * 1e3;
        return {};
    };
    for (std::size_t i = 0; i < tokens; ++i) {
        bool same = i < c.cachedTokens.size() && i < c.uncachedTokens.size() &&
                    c.cachedTokens[i] == c.uncachedTokens[i];
        t.addRow({static_cast<std::int64_t>(i + 1),
                  step(c.cachedPrefillSeconds, c.cachedStepSeconds, i),
                  step(c.uncachedPrefillSeconds, c.uncachedStepSeconds, i),
                  std::string(same ? "yes" : "no")});
    }
    char note[160];
    std::snprintf(
        note, sizeof note, "total: cached %.1f ms, uncached %.1f ms, ratio %.2f; tokens %s",
        c.cachedTotalSeconds() * 1e3, c.uncachedTotalSeconds() * 1e3,
        c.cachedTotalSeconds() > 0 ? c.uncachedTotalSeconds() / c.cachedTotalSeconds() : 0.0,
        c.identicalTokens() ? "identical" : "differ");
    t.notes.push_back(note);
    return t;
}

} // namespace inferscope::compute::experiments
