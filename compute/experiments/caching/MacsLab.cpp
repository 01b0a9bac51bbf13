#include "compute/experiments/caching/MacsLab.hpp"

#include "compute/experiments/bench/Bench.hpp"
#include "compute/experiments/caching/CacheSavings.hpp"
#include "compute/experiments/caching/CachingLab.hpp"

#include <stdexcept>

namespace inferscope::compute::experiments {

MacsLab::Result MacsLab::run(LabContext& lab, const Request& request, const JobControl& control) {
    const auto& config = lab.model().config;
    if (config.contextLength > 0 &&
        std::uint64_t(request.promptTokens) + request.generatedTokens > config.contextLength)
        throw std::invalid_argument("-P " + std::to_string(request.promptTokens) + " plus -T " +
                                    std::to_string(request.generatedTokens) +
                                    " exceed the model's context of " +
                                    std::to_string(config.contextLength));
    MacsResult result;
    result.tables.push_back(
        macGrowthTable(config, request.promptTokens, doublingCounts(request.generatedTokens)));
    if (request.formulaOnly) return result;
    // Only the engine counts what it schedules: refuse before running both passes.
    if (!gpuEngineOf(lab))
        throw std::invalid_argument("the measured counter is the Vulkan engine's; the " +
                                    lab.backend().name() +
                                    " backend does not count (use --formula-only)");
    PromptSpec prompt;
    prompt.promptTokenIds = benchPrompt(request.promptTokens, config.vocabSize);
    prompt.chat = false;
    prompt.maxNewTokens = std::int32_t(request.measuredTokens);
    const auto run = CachingLab::run(lab, prompt, control);
    result.tables.push_back(macCounterTable(config, *run));
    if (run->cachedPeak) result.tables.push_back(peakMemoryTable(config, *run));
    result.counterAgrees = macCounterAgrees(config, *run);
    return result;
}

} // namespace inferscope::compute::experiments
