#include "compute/experiments/caching/CacheSavings.hpp"

#include "models/reference/OperationCounts.hpp"

#include <cstdio>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

double ratio(double a, double b) {
    return b > 0 ? a / b : 0.0;
}

// The formula for step i of a run: the prefill (i = 0) or decode step i, cached or not.
models::MacCount formulaStep(const models::ModelConfig& c, std::uint64_t prompt, std::size_t i,
                             bool cached) {
    if (i == 0) return models::forwardMacs(c, 0, prompt, 1);
    const std::uint64_t length = prompt + i; // the step feeds the token at position length - 1
    return cached ? models::forwardMacs(c, length - 1, 1, 1) : models::forwardMacs(c, 0, length, 1);
}

} // namespace

std::vector<std::uint64_t> doublingCounts(std::uint64_t generated) {
    std::vector<std::uint64_t> counts;
    for (std::uint64_t t = 1; t < generated; t *= 2) counts.push_back(t);
    if (generated > 0) counts.push_back(generated);
    return counts;
}

Table macGrowthTable(const models::ModelConfig& c, std::uint64_t prompt,
                     const std::vector<std::uint64_t>& generatedCounts) {
    Table t;
    t.id = "mac-growth";
    t.title = "Multiply-accumulates to generate T tokens after a " + std::to_string(prompt) +
              "-token prompt, from the formula";
    t.addColumn("T", "tokens")
        .addColumn("cached projections", "MACs")
        .addColumn("cached attention", "MACs")
        .addColumn("uncached projections", "MACs")
        .addColumn("uncached attention", "MACs")
        .addColumn("uncached / cached", "x", 2)
        .addColumn("attention uncached / cached", "x", 2);
    for (auto generated : generatedCounts) {
        const auto cached = models::generationMacs(c, prompt, generated, true);
        const auto uncached = models::generationMacs(c, prompt, generated, false);
        t.addRow({std::int64_t(generated), std::int64_t(cached.projection),
                  std::int64_t(cached.attention), std::int64_t(uncached.projection),
                  std::int64_t(uncached.attention),
                  ratio(double(uncached.total()), double(cached.total())),
                  ratio(double(uncached.attention), double(cached.attention))});
    }
    t.notes.push_back("Per token: " +
                      groupThousands(std::int64_t(models::layerMatrixMacsPerToken(c) * c.layers)) +
                      " MACs in the layers' matrices, " +
                      groupThousands(std::int64_t(models::outputHeadMacsPerToken(c))) +
                      " in the output head (logits of the last position only), and (p + 1) x " +
                      std::to_string(c.heads) + " heads x " + std::to_string(c.headDim) +
                      " x 2 x " + std::to_string(c.layers) + " layers of attention at position p.");
    t.notes.push_back("Cached, each step runs one token: attention summed over T steps grows as "
                      "T^2. Uncached, step t runs all P + t tokens again: attention grows as T^3, "
                      "projections as T^2.");
    return t;
}

bool macCounterAgrees(const models::ModelConfig& c, const CachingComparison& run) {
    if (run.cachedStepMacs.empty() || run.uncachedStepMacs.empty()) return false;
    const auto prompt = std::uint64_t(run.promptTokens);
    for (std::size_t i = 0; i < run.cachedStepMacs.size(); ++i)
        if (!(run.cachedStepMacs[i] == formulaStep(c, prompt, i, true))) return false;
    for (std::size_t i = 0; i < run.uncachedStepMacs.size(); ++i)
        if (!(run.uncachedStepMacs[i] == formulaStep(c, prompt, i, false))) return false;
    return true;
}

Table macCounterTable(const models::ModelConfig& c, const CachingComparison& run) {
    if (run.cachedStepMacs.empty() || run.uncachedStepMacs.empty())
        throw std::invalid_argument("the " + run.backend +
                                    " run carries no operation counter (the Vulkan engine "
                                    "counts; the CPU reference does not)");
    Table t;
    t.id = "mac-counter";
    t.title = "The engine's counter against the formula, step by step (" + run.backend + ")";
    t.addColumn("step")
        .addColumn("tokens in context")
        .addColumn("cached", "ms", 2)
        .addColumn("uncached", "ms", 2)
        .addColumn("cached counted", "MACs")
        .addColumn("uncached counted", "MACs")
        .addColumn("uncached attention counted", "MACs")
        .addColumn("formula agrees");
    const auto prompt = std::uint64_t(run.promptTokens);
    const std::size_t steps = std::min(run.cachedStepMacs.size(), run.uncachedStepMacs.size());
    models::MacCount cachedTotal, uncachedTotal;
    bool allAgree = true;
    for (std::size_t i = 0; i < steps; ++i) {
        const auto& cached = run.cachedStepMacs[i];
        const auto& uncached = run.uncachedStepMacs[i];
        const bool agree = cached == formulaStep(c, prompt, i, true) &&
                           uncached == formulaStep(c, prompt, i, false);
        allAgree = allAgree && agree;
        cachedTotal += cached;
        uncachedTotal += uncached;
        auto seconds = [&](const std::vector<double>& steps, double prefill) {
            if (i == 0) return prefill * 1e3;
            return i - 1 < steps.size() ? steps[i - 1] * 1e3 : 0.0;
        };
        t.addRow({i == 0 ? std::string("prefill") : std::to_string(i), std::int64_t(prompt + i),
                  seconds(run.cachedStepSeconds, run.cachedPrefillSeconds),
                  seconds(run.uncachedStepSeconds, run.uncachedPrefillSeconds),
                  std::int64_t(cached.total()), std::int64_t(uncached.total()),
                  std::int64_t(uncached.attention), std::string(agree ? "yes" : "NO")});
    }
    t.notes.push_back(std::string(allAgree ? "At every step" : "NOT at every step") +
                      ", the MACs the engine counted from the rows it scheduled equal the "
                      "formula. In all: " +
                      groupThousands(std::int64_t(cachedTotal.total())) + " cached vs " +
                      groupThousands(std::int64_t(uncachedTotal.total())) + " uncached (" +
                      fixed(ratio(double(uncachedTotal.total()), double(cachedTotal.total())), 1) +
                      "x); wall time " + fixed(run.cachedTotalSeconds() * 1e3, 0) + " vs " +
                      fixed(run.uncachedTotalSeconds() * 1e3, 0) + " ms.");
    return t;
}

Table peakMemoryTable(const models::ModelConfig& c, const CachingComparison& run) {
    if (!run.cachedPeak || !run.uncachedPeak)
        throw std::invalid_argument("the " + run.backend +
                                    " run has no device-memory accounting (Vulkan engine only)");
    Table t;
    t.id = "peak-memory";
    const std::uint64_t positions =
        std::uint64_t(run.promptTokens) + std::uint64_t(run.cachedTokens.size());
    t.title = "Peak device memory beyond the resident weights, generating " +
              std::to_string(run.cachedTokens.size()) + " tokens after " +
              std::to_string(run.promptTokens) + " (engine accounting)";
    t.addColumn("run")
        .addColumn("KV blocks at the fullest step", "bytes")
        .addColumn("activation rows")
        .addColumn("activations in use", "bytes")
        .addColumn("score buffers", "bytes")
        .addColumn("peak in use", "bytes")
        .addColumn("reserved up front", "bytes");
    auto row = [&](const char* name, const PeakMemory& p) {
        t.addRow({std::string(name), std::int64_t(p.kvBytes), std::int64_t(p.activationRows),
                  std::int64_t(p.activationBytes()), std::int64_t(0),
                  std::int64_t(p.inUseWithoutWeights()), std::int64_t(p.reservedWithoutWeights)});
    };
    row("cached", *run.cachedPeak);
    row("uncached", *run.uncachedPeak);
    // An eager implementation keeps a heads x n x n fp32 score matrix per layer while it runs.
    const std::uint64_t eagerScores = std::uint64_t(c.heads) * positions * positions * 4;
    PeakMemory eager = *run.uncachedPeak;
    t.addRow({std::string("uncached, eager attention (formula)"), std::int64_t(eager.kvBytes),
              std::int64_t(eager.activationRows), std::int64_t(eager.activationBytes()),
              std::int64_t(eagerScores), std::int64_t(eager.inUseWithoutWeights() + eagerScores),
              std::monostate{}});
    const double measured = ratio(double(run.uncachedPeak->inUseWithoutWeights()),
                                  double(run.cachedPeak->inUseWithoutWeights()));
    const double eagerRatio = ratio(double(eager.inUseWithoutWeights() + eagerScores),
                                    double(run.cachedPeak->inUseWithoutWeights()));
    t.notes.push_back("Uncached / cached at the peak: " + fixed(measured, 2) +
                      "x here; with eager attention's score matrices " + fixed(eagerRatio, 2) +
                      "x (the chapter measured 8.3x with a framework that keeps them).");
    t.notes.push_back("This engine's attention streams keys through shared memory with a "
                      "running softmax, so no run writes a score matrix; an uncached step still "
                      "holds the whole sequence's K and V while it recomputes them, so both "
                      "runs peak with the same KV blocks, and the uncached one adds one "
                      "activation row per position (in chunks of at most " +
                      std::to_string(run.uncachedPeak->activationRows) + " rows).");
    return t;
}

} // namespace inferscope::compute::experiments
