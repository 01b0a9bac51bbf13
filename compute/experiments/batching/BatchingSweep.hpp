#pragma once
// Chapter item 6: batched decode on the real engine. B sequences, each holding a cache of C
// tokens, decode one token per step together; per B the step time, aggregate tokens/s, each
// request's time per token, both multipliers against the first B, the roofline's weight-bound
// floor beside the measured step, and the knee where adding sequences stops paying. Each
// sequence's greedy tokens are checked against the same sequence decoded alone.
#include "compute/Table.hpp"
#include "compute/engine/Engine.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

// One point of a measured curve: decode step time at a batch size.
struct BatchCurvePoint {
    std::uint32_t batch = 0;
    double stepMilliseconds = 0;
    // Standard error of the mean step, from its timed repeats (0: one measurement, no spread).
    double stepStandardError = 0;
    double tokensPerSecond() const {
        return stepMilliseconds > 0 ? batch * 1e3 / stepMilliseconds : 0;
    }
    // The same error carried to tokens/s (first order: relative errors are equal).
    double tokensPerSecondStandardError() const {
        return stepMilliseconds > 0 ? tokensPerSecond() * stepStandardError / stepMilliseconds : 0;
    }
};

// The knee rule: an added sequence buys, between two measured points, less than
// `kKneeFraction` of the tokens/s one lone sequence gets (per sequence at the first point).
// While the step is weight-bound each added sequence is nearly free (it adds about a lone
// sequence's tokens/s); once it is compute-bound it adds nearly nothing.
inline constexpr double kKneeFraction = 0.10;
// Noise: an interval counts as a bend only when its marginal tokens/s stays under the rule's
// line by more than this many standard errors (95%, the steps' spread at both ends), so one
// slow step cannot make a knee.
inline constexpr double kKneeConfidence = 1.96;
// The index of the knee: the last point before the first interval whose marginal tokens/s
// per added sequence falls below fraction x (tokens/s per sequence at the first point), beyond
// the noise; nullopt when the curve never bends that far. Throws std::invalid_argument unless
// batches rise strictly and every step time is positive.
std::optional<std::size_t> findKnee(const std::vector<BatchCurvePoint>& curve,
                                    double fraction = kKneeFraction);
std::string kneeRuleText(double fraction = kKneeFraction);

struct BatchSweepOptions {
    std::vector<std::uint32_t> batches = {1, 2, 4, 8, 16, 32, 64};
    std::uint32_t context = 64; // cache of each sequence when the timed steps start
    std::uint32_t steps = 8;    // timed decode steps per point (after one untimed step)
    // Sequences of the largest measured batch decoded again alone to check exactness.
    std::uint32_t exactnessSequences = 3;
    double kneeFraction = kKneeFraction;
    double readBytesPerSecond = 0; // measured device read bandwidth (0: no roofline)
    // Called between steps; may throw to cancel (the lab session's JobCancelled).
    std::function<void(const std::string& stage, int percent)> progress;
};

struct BatchSweepPoint {
    std::uint32_t batch = 0;
    double stepMilliseconds = 0;       // mean of the timed steps
    double stepSpreadMilliseconds = 0; // their sample standard deviation
    double tokensPerSecond = 0;
    double msPerTokenPerRequest = 0; // each request gets one token per step
    double throughputMultiplier = 0; // against the first point
    double latencyMultiplier = 0;
    double rooflineWeightsMilliseconds = 0; // matrix bytes / bandwidth
    double rooflineWithKvMilliseconds = 0;  // + the KV bytes the attention reads
    double prefillMillisecondsPerToken = 0; // the prefill of B x C tokens that set it up
};

struct ExactnessCheck {
    std::uint32_t batch = 0;
    std::uint32_t sequence = 0; // 0-based position in the batch
    std::uint32_t tokens = 0;   // greedy tokens compared
    std::int32_t firstMismatch = -1;
    bool equal() const { return firstMismatch < 0; }
};

struct BatchSweepResult {
    std::string device;
    std::string weightFormat; // "q4_1", or "q4_1, int8 activations" (Engine::weightFormatLabel)
    std::uint32_t context = 0;
    std::uint32_t steps = 0;
    std::vector<std::uint32_t> requested;
    std::vector<BatchSweepPoint> points;
    std::optional<std::size_t> knee;
    double kneeFraction = kKneeFraction;
    std::uint32_t maxBatch = 0; // what the KV cache holds at this context
    std::string capNote;        // non-empty when requested sizes were left out
    std::uint64_t matrixBytes = 0;
    std::uint64_t kvBytesPerToken = 0;
    double readBytesPerSecond = 0;
    std::vector<ExactnessCheck> exactness;
    std::vector<BatchCurvePoint> curve() const;
    bool exact() const;
};

// How the sweep lays out each sequence's cache of C tokens: a prompt shared by every sequence
// over the full blocks below C (prefilled once, forked), then a distinct tail of 1..block
// tokens, so the sequences decode different tokens.
struct SweepLayout {
    std::uint32_t prefix = 0, tail = 0;
};
SweepLayout sweepLayout(const Engine& engine, std::uint32_t context);
// The largest B the engine's KV cache holds for the sweep at this context and step count
// (each sequence's prefilled template and its working copy: two sequences per B).
std::uint32_t maxBatchForContext(const Engine& engine, std::uint32_t context, std::uint32_t steps);

// Runs the sweep on the engine (which it resets before and after). Throws
// std::invalid_argument for a zero batch, no steps, or a context over the engine's.
BatchSweepResult runBatchSweep(Engine& engine, const BatchSweepOptions& options);

// Tables: "batching-sweep" (one row per B), "batching-knee" (the knee and the rule),
// "batching-exactness" (batched vs alone).
std::vector<Table> batchSweepTables(const BatchSweepResult& result);

} // namespace inferscope::compute::experiments
