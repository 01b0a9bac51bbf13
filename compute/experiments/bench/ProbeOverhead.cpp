#include "compute/experiments/bench/ProbeOverhead.hpp"

#include "compute/experiments/bench/Bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace inferscope::compute {

std::vector<ProbeCost> measureProbeOverhead(Engine& engine, std::uint32_t context,
                                            std::uint32_t steps, int repeats) {
    const ProbeOptions saved = engine.probes();
    const auto prompt = benchPrompt(std::max<std::uint32_t>(1, context), engine.config().vocabSize);
    struct Setting {
        const char* name;
        ProbeOptions probes;
    };
    const Setting settings[] = {
        {"none", {}},
        {"residual max |h|", {.kernelTimings = false, .residualMax = true}},
        // The window records the prompt's whole residual stream this way (a copy per layer).
        {"residual stream copy", {.kernelTimings = false, .residualStream = true}},
        {"kernel timestamps", {.kernelTimings = true, .residualMax = false}}};
    std::vector<ProbeCost> costs;
    for (const auto& setting : settings) {
        engine.setProbes(setting.probes);
        double best = std::numeric_limits<double>::infinity();
        for (int r = 0; r < std::max(1, repeats); ++r) {
            engine.reset();
            auto step = engine.step({{1, prompt}});
            auto start = std::chrono::steady_clock::now();
            for (std::uint32_t i = 0; i < steps; ++i)
                step = engine.step({{1, {step.sequences.front().argmax.back()}}});
            best = std::min(
                best,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        costs.push_back({setting.name, best * 1e3 / std::max<std::uint32_t>(1, steps), 1.0});
    }
    for (auto& c : costs)
        c.relativeToNone = c.decodeStepMilliseconds / costs.front().decodeStepMilliseconds;
    engine.reset();
    engine.setProbes(saved);
    return costs;
}

std::string timestampCostNote(double kernelMilliseconds, double untimedStepMilliseconds,
                              std::uint32_t dispatches) {
    char text[400];
    if (untimedStepMilliseconds > 0 && dispatches > 0 &&
        kernelMilliseconds > 1.1 * untimedStepMilliseconds) {
        std::snprintf(text, sizeof text,
                      "the kernel times add up to %.2f ms per step, %.2fx the untimed step "
                      "(%.2f ms): the timestamp after each of the %u dispatches added about "
                      "%.0f us to its kernel's time, which weighs most on the short kernels",
                      kernelMilliseconds, kernelMilliseconds / untimedStepMilliseconds,
                      untimedStepMilliseconds, dispatches,
                      (kernelMilliseconds - untimedStepMilliseconds) * 1e3 / dispatches);
    } else {
        std::snprintf(text, sizeof text,
                      "the kernel times add up to %.2f ms per step against %.2f ms for the "
                      "untimed step: the timestamps change little here",
                      kernelMilliseconds, untimedStepMilliseconds);
    }
    return text;
}

} // namespace inferscope::compute
