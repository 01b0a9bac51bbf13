#include "compute/experiments/bench/Bench.hpp"

#include "compute/Stopwatch.hpp"
#include <algorithm>
#include <chrono>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

namespace inferscope::compute {

namespace {
// Process CPU time, all threads; 0 where the platform has no getrusage.
double processCpuSeconds() {
#if defined(__unix__) || defined(__APPLE__)
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
#else
    return 0.0;
#endif
}

std::vector<SequenceInput> prefillBatch(std::uint32_t batch,
                                        const std::vector<std::int32_t>& prompt) {
    std::vector<SequenceInput> inputs;
    for (std::uint32_t s = 0; s < batch; ++s) inputs.push_back({SequenceId(s + 1), prompt});
    return inputs;
}

std::vector<SequenceInput> decodeBatch(const StepResult& previous) {
    std::vector<SequenceInput> inputs;
    for (const auto& s : previous.sequences) inputs.push_back({s.sequence, {s.argmax.back()}});
    return inputs;
}
} // namespace

std::vector<std::int32_t> benchPrompt(std::uint32_t tokens, std::uint32_t vocab,
                                      std::uint32_t seed) {
    std::vector<std::int32_t> prompt;
    for (std::uint32_t i = 0; i < tokens; ++i) {
        prompt.push_back(std::int32_t((i * 7919u + seed * 104729u + 17u) % vocab));
    }
    return prompt;
}

namespace {
// What runBenchInterleaved keeps of one engine between its repeats.
struct BenchRun {
    Engine* engine = nullptr;
    BenchResult result;
    std::vector<std::int32_t> prompt;
    ProbeOptions savedProbes;
    double slowestDecodeSeconds = 0;
};

BenchRun startRun(Engine& engine, const BenchOptions& options) {
    BenchRun run;
    run.engine = &engine;
    BenchResult& result = run.result;
    result.device = engine.context().info().name;
    result.weightFormat = std::string(weightFormatName(engine.options().weightFormat));
    result.promptTokens = options.promptTokens;
    result.decodeTokens = options.decodeTokens;
    result.batch = std::max<std::uint32_t>(1, options.batch);
    result.weightBytes = engine.memory().weightBytes;
    run.prompt =
        benchPrompt(std::max<std::uint32_t>(1, options.promptTokens), engine.config().vocabSize);
    run.savedProbes = engine.probes();
    engine.setProbes({});

    // Warm-up: builds every pipeline variant the timed runs use.
    engine.reset();
    auto warm = engine.step(prefillBatch(result.batch, run.prompt));
    // Two decode steps where the context has room for them (a prompt may fill it).
    const std::size_t room = engine.kvCache().maxPositionsPerSequence();
    for (std::size_t i = 0; i < 2 && run.prompt.size() + i + 1 <= room; ++i)
        warm = engine.step(decodeBatch(warm));
    engine.reset();
    return run;
}

// One timed repeat (prefill, then the decode steps, from an empty cache); keeps the fastest.
void timeRepeat(BenchRun& run, const BenchOptions& options, bool first) {
    Engine& engine = *run.engine;
    BenchResult& result = run.result;
    engine.reset();
    auto start = std::chrono::steady_clock::now();
    double cpuStart = processCpuSeconds();
    StepResult step = engine.step(prefillBatch(result.batch, run.prompt));
    const double promptSeconds = secondsSince(start);
    if (first || promptSeconds < result.promptSeconds) {
        result.promptSeconds = promptSeconds;
        result.promptCpuSeconds = processCpuSeconds() - cpuStart;
    }
    result.dispatchesPerPrefill = step.probes.dispatches;

    start = std::chrono::steady_clock::now();
    cpuStart = processCpuSeconds();
    for (std::uint32_t i = 0; i < options.decodeTokens; ++i) {
        step = engine.step(decodeBatch(step));
        result.dispatchesPerDecodeStep = step.probes.dispatches;
    }
    const double decodeSeconds = secondsSince(start);
    run.slowestDecodeSeconds = std::max(run.slowestDecodeSeconds, decodeSeconds);
    if (first || decodeSeconds < result.decodeSeconds) {
        result.decodeSeconds = decodeSeconds;
        result.decodeCpuSeconds = processCpuSeconds() - cpuStart;
    }
}

// The rates of the kept repeats, then the profiled pass.
BenchResult finishRun(BenchRun& run, const BenchOptions& options) {
    Engine& engine = *run.engine;
    BenchResult& result = run.result;
    result.promptTokensPerSecond = double(run.prompt.size()) * result.batch / result.promptSeconds;
    if (options.decodeTokens) {
        result.decodeStepMilliseconds = result.decodeSeconds * 1000.0 / options.decodeTokens;
        result.decodeTokensPerSecond =
            double(options.decodeTokens) * result.batch / result.decodeSeconds;
        result.slowestDecodeTokensPerSecond =
            double(options.decodeTokens) * result.batch / run.slowestDecodeSeconds;
        result.decodeWeightGigabytesPerSecond =
            double(result.weightBytes) * options.decodeTokens / result.decodeSeconds / 1e9;
    }

    if (options.kernelBreakdown && engine.context().info().timestamps) {
        engine.reset();
        engine.setProbes({.kernelTimings = true, .residualMax = false});
        StepResult step = engine.step(prefillBatch(result.batch, run.prompt));
        result.prefillKernels = step.probes.kernels;
        const std::uint32_t steps = std::max<std::uint32_t>(1, std::min(options.decodeTokens, 8u));
        for (std::uint32_t i = 0; i < steps; ++i) {
            step = engine.step(decodeBatch(step));
            addKernelTimes(result.decodeKernels, step.probes.kernels);
        }
        for (auto& k : result.decodeKernels) {
            k.dispatches /= steps;
            k.microseconds /= steps;
        }
    }
    engine.reset();
    engine.setProbes(run.savedProbes);
    return result;
}
} // namespace

BenchResult runBench(Engine& engine, const BenchOptions& options) {
    Engine* const engines[] = {&engine};
    return runBenchInterleaved(engines, options).front();
}

std::vector<BenchResult> runBenchInterleaved(std::span<Engine* const> engines,
                                             const BenchOptions& options) {
    std::vector<BenchRun> runs;
    for (Engine* engine : engines) runs.push_back(startRun(*engine, options));
    for (std::uint32_t r = 0; r < std::max<std::uint32_t>(1, options.repeats); ++r)
        for (auto& run : runs) timeRepeat(run, options, r == 0);
    std::vector<BenchResult> results;
    for (auto& run : runs) results.push_back(finishRun(run, options));
    return results;
}

std::uint64_t matrixBytesPerDecodeStep(const Engine& engine) {
    std::uint64_t bytes = 0;
    for (const auto& m : engine.weightMatrices())
        if (m.name != "token_embd") bytes += m.bytesRead;
    return bytes;
}

} // namespace inferscope::compute
