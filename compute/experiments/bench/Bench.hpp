#pragma once
// pp/tg-style throughput of the Engine (what `inferscope-cli bench` prints): prompt
// processing tokens/s for a prompt of P tokens, generation tokens/s over N greedy decode
// steps at batch size B, dispatches per step, and a per-kernel breakdown taken in a
// separate profiled pass (timestamps serialize work, so they never touch the timed runs).
#include "compute/engine/Engine.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute {

struct BenchOptions {
    std::uint32_t promptTokens = 128;
    std::uint32_t decodeTokens = 32;
    std::uint32_t batch = 1;     // sequences decoded together (each gets the prompt)
    bool kernelBreakdown = true; // the extra profiled pass
    // Timed runs (prefill, then the decode steps, from an empty cache); the fastest prefill
    // and the fastest decode are kept, as llama.cpp's benchmarks keep the best repeat.
    std::uint32_t repeats = 1;
};

struct BenchResult {
    std::string device;
    std::string weightFormat;
    std::uint32_t promptTokens = 0;
    std::uint32_t decodeTokens = 0;
    std::uint32_t batch = 0;
    double promptSeconds = 0;
    double promptTokensPerSecond = 0;
    double decodeSeconds = 0;
    double decodeTokensPerSecond = 0; // all sequences together
    // The slowest of the timed repeats (equal to the above with one repeat): the spread a
    // comparison between formats must exceed before it says more than noise.
    double slowestDecodeTokensPerSecond = 0;
    double decodeStepMilliseconds = 0;
    // Process CPU time (all threads, lavapipe's included) of the timed prefill and decode:
    // on a CPU device a load-independent cost; tokens per CPU-second x cores is what an
    // otherwise idle machine would reach at best.
    double promptCpuSeconds = 0;
    double decodeCpuSeconds = 0;
    std::uint32_t dispatchesPerDecodeStep = 0;
    std::uint32_t dispatchesPerPrefill = 0;
    std::uint64_t weightBytes = 0;
    double decodeWeightGigabytesPerSecond = 0; // weight bytes read per second while decoding
    std::vector<KernelTime> prefillKernels;    // whole prefill
    std::vector<KernelTime> decodeKernels;     // average per decode step
};

BenchResult runBench(Engine& engine, const BenchOptions& options = {});
// The same measurement on several engines (one per weight format, say), their timed repeats
// interleaved: repeat r of every engine runs before repeat r + 1 of any. A shared machine's
// speed drifts by 1.5x within minutes; run one engine's repeats after another's and the drift
// decides which is faster, interleaved it slows every engine's repeats alike. Each engine is
// warmed up once before the first repeat, and profiled (kernelBreakdown) after the last.
std::vector<BenchResult> runBenchInterleaved(std::span<Engine* const> engines,
                                             const BenchOptions& options);

// Bytes of weight matrices one decode step reads: every projection and the output head once
// (the tied head included), but only one row of the embedding table, which is left out.
std::uint64_t matrixBytesPerDecodeStep(const Engine& engine);

// Deterministic prompt ids for benchmarks (spread over the vocabulary).
std::vector<std::int32_t> benchPrompt(std::uint32_t tokens, std::uint32_t vocab,
                                      std::uint32_t seed = 0);

} // namespace inferscope::compute
