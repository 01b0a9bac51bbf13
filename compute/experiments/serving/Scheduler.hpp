#pragma once
// Chapter item 7: static vs continuous batching over a skewed request mix. The schedule
// (which request holds which slot at which step) depends on the output lengths only, so it is
// a pure function; the same schedule is then run for real on the engine (times measured) or
// costed by a simulator from measured per-step costs (times predicted), and both go through
// one summary, so the two sets of figures are comparable line by line.
#include "compute/Table.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/experiments/batching/BatchingSweep.hpp"
#include "compute/experiments/serving/KvBlockMap.hpp"
#include "compute/experiments/serving/PrefixSharing.hpp"
#include "compute/experiments/serving/RequestMix.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

// ---- The schedule (pure) ------------------------------------------------------------------

// ContinuousChunked (simulated only): continuous admission, but prompts are prefilled at most
// `chunkTokens` prompt tokens per step in all, oldest admission first, beside the decodes.
enum class BatchingPolicy { Static, Continuous, ContinuousChunked };
std::string policyName(BatchingPolicy policy);

// Prefilling: the slot holds a request whose prompt is not yet all prefilled (chunked only).
enum class SlotState : std::uint8_t { Empty, Generating, Padding, Prefilling };
struct SlotCell {
    std::int32_t request = -1; // index into the mix
    SlotState state = SlotState::Empty;
};

struct ScheduleStep {
    std::vector<SlotCell> cells;
    std::uint32_t sequences = 0;        // computed by the engine: generating + padding
    std::uint32_t generating = 0;       // making a token some request keeps
    std::uint32_t admitted = 0;         // requests that take a slot this step
    std::uint32_t prefillSequences = 0; // sequences fed prompt tokens this step
    std::uint32_t prefillTokens = 0;    // those prompt tokens
};

struct ScheduledRequest {
    std::uint32_t slot = 0;
    std::uint32_t admitStep = 0;      // it takes its slot (unchunked: its whole prefill)
    std::uint32_t firstTokenStep = 0; // its last prompt token runs, making its first token
    std::uint32_t finishStep = 0;     // the step that makes its last token
    std::uint32_t returnStep = 0;     // when the caller gets the answer (static: the group's end)
};

struct Schedule {
    BatchingPolicy policy = BatchingPolicy::Continuous;
    std::uint32_t slotCount = 0;
    std::vector<ScheduleStep> steps;
    std::vector<ScheduledRequest> requests; // in mix order
    std::uint64_t idleSlotSteps() const;    // slot-steps making no kept token
    std::uint64_t paddingSlotSteps() const;
};

struct RequestShape {
    std::uint32_t promptTokens = 0;
    std::uint32_t outputTokens = 0;
};

// Static: fixed groups of `slots` requests in arrival order; a group holds its slots until its
// longest member is done (finished members compute padding), then the next group starts.
// Continuous: a slot freed by a finished request takes the next queued request on the next
// step. ContinuousChunked: as continuous, but each step prefills at most chunkTokens prompt
// tokens (all admitted requests together, oldest first); a request makes its first token in
// the step that prefills its last prompt token. All requests are queued at time 0. Throws
// std::invalid_argument for zero slots, an empty mix, a request with no prompt or no output
// tokens, or a chunked schedule with a chunk of 0 tokens.
Schedule buildSchedule(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                       BatchingPolicy policy, std::uint32_t chunkTokens = 0);
// The same schedule handed to `sink` step by step as it is made, none kept (the returned
// schedule has its requests and no steps): what a simulation of a large mix needs, memory in
// requests rather than in steps x slots. Throws as buildSchedule.
using ScheduleStepSink = std::function<void(ScheduleStep&&)>;
Schedule streamSchedule(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                        BatchingPolicy policy, std::uint32_t chunkTokens,
                        const ScheduleStepSink& sink);
// KV blocks the schedule holds at the end of each step (static and continuous schedules,
// the ones the engine runs), the most of them, and the longest sequence in positions.
std::vector<std::uint32_t> blocksPerStep(const Schedule& schedule,
                                         const std::vector<RequestShape>& requests,
                                         std::uint32_t blockSize);
std::uint32_t peakBlocks(const Schedule& schedule, const std::vector<RequestShape>& requests,
                         std::uint32_t blockSize);
std::uint32_t longestSequence(const Schedule& schedule, const std::vector<RequestShape>& requests);

// ---- Costs: measured or simulated -----------------------------------------------------------

// Step time as measured in the batching sweep: decode step time over B (linear between the
// points, flat below the first, extended with the last slope above the last), plus a prefill
// cost per prompt token beyond the one each sequence computes anyway.
struct StepCostModel {
    std::vector<BatchCurvePoint> decode;
    double prefillMillisecondsPerToken = 0;
    double stepMilliseconds(std::uint32_t sequences, std::uint32_t extraTokens) const;
    // One step of a schedule: its sequences and the prompt tokens beyond one per sequence.
    double stepSeconds(const ScheduleStep& step) const {
        return stepMilliseconds(step.sequences, step.prefillTokens - step.prefillSequences) / 1e3;
    }
};
// Seconds of every step of the schedule under the model.
std::vector<double> simulateStepSeconds(const Schedule& schedule, const StepCostModel& model);

struct PolicyFigures {
    double totalSeconds = 0;
    double tokensPerSecond = 0;
    double meanLatency = 0, p50Latency = 0, p99Latency = 0; // seconds, arrival at 0
    double meanTimeToFirstToken = 0;
    std::uint64_t idleSlotSteps = 0;
    std::uint32_t steps = 0;
};
// Percentiles by nearest rank. Throws std::invalid_argument when the step count differs.
PolicyFigures summarize(const Schedule& schedule, const std::vector<RequestShape>& requests,
                        const std::vector<double>& stepSeconds);
// summarize(schedule, requests, simulateStepSeconds(schedule, model)) with the schedule
// streamed: one number per step is kept, no slot cells.
PolicyFigures simulatePolicy(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                             BatchingPolicy policy, std::uint32_t chunkTokens,
                             const StepCostModel& model);

// ---- The real run ---------------------------------------------------------------------------

struct EngineRun {
    std::vector<double> stepSeconds;
    std::vector<std::vector<std::int32_t>> tokens; // per request, the tokens it kept
    std::uint32_t blocksInUseAfter = 0;            // KV blocks still held after the run
    std::uint32_t peakBlocksInUse = 0;
    std::vector<KvBlockSnapshot> blockSnapshots; // at the steps asked for, in that order
};
// Throws std::invalid_argument when the schedule does not fit the engine: more slots than
// sequences, a sequence longer than the context, more KV blocks at once than the cache has.
void checkFits(const Engine& engine, const Schedule& schedule,
               const std::vector<RequestShape>& shapes);
// Runs the schedule on the engine (reset before; every sequence released as it returns),
// snapshotting the KV cache after each step in `snapshotAt` (before that step's releases).
// Throws std::invalid_argument when it does not fit the engine's KV cache or context, or for
// a chunked schedule (simulated only).
// onStep(steps done) follows each step.
EngineRun runSchedule(Engine& engine, const Schedule& schedule,
                      const std::vector<ServingRequest>& requests,
                      const std::function<void(const std::string&, int)>& progress = {},
                      const std::vector<std::uint32_t>& snapshotAt = {},
                      const std::function<void(std::uint32_t)>& onStep = {});
// The request decoded alone (greedy, exactly outputTokens tokens).
std::vector<std::int32_t> decodeAlone(Engine& engine, const ServingRequest& request);

// ---- The experiment -------------------------------------------------------------------------

struct SchedulerOptions {
    std::uint32_t slotCount = 8;
    std::uint32_t verifyRequests = 3;   // requests decoded again alone
    std::uint32_t costSweepSteps = 4;   // timed steps per B of the cost sweep
    std::uint32_t simulateRequests = 0; // > 0: also simulate a mix this large ...
    std::uint32_t simulateSlots = 0;    // ... on this many slots (0: `slots`)
    std::uint32_t chunkTokens = 64;     // prompt tokens per step of the chunked simulation
    std::uint32_t blockSnapshots = 4;   // KV snapshots of the continuous run (the peak first)
    RequestMixSpec mix;                 // the statistics a simulated larger mix scales
    std::function<void(const std::string& stage, int percent)> progress;
    // The timeline of the steps run so far (both policies, "scheduler-timeline"), as the runs
    // go: at most every onTimelineSeconds, and once when each policy's run ends.
    std::function<void(const Table& timeline)> onTimeline;
    double onTimelineSeconds = 0.25;
};

struct PolicyResult {
    BatchingPolicy policy = BatchingPolicy::Continuous;
    Schedule schedule;
    PolicyFigures measured, simulated;
    EngineRun run;
};

struct SchedulerResult {
    std::uint32_t slotCount = 0;
    std::vector<RequestShape> shapes;
    StepCostModel costs;
    std::vector<PolicyResult> policies; // static, continuous
    // Continuous with chunked prefill, simulated on the same mix and costs.
    std::uint32_t chunkTokens = 0;
    PolicyFigures chunkedSimulated;
    // The continuous run's KV cache (peak first), and any later snapshots (prefix sharing).
    std::vector<KvBlockSnapshot> blockSnapshots;
    std::optional<PrefixSharingResult> prefixSharing; // set by the caller that ran it
    struct Verification {
        std::uint32_t request = 0;
        std::uint32_t tokens = 0;
        bool staticEqual = false, continuousEqual = false;
    };
    std::vector<Verification> verified;
    // Simulation only, of a larger mix (simulateRequests > 0).
    std::uint32_t largeRequests = 0, largeSlots = 0;
    PolicyFigures largeStatic, largeContinuous, largeChunked;
};

// Measures the step costs (a short batching sweep up to `slots`), builds both schedules,
// simulates and runs each on the engine, and decodes a few requests alone.
SchedulerResult compareSchedulers(Engine& engine, const std::vector<ServingRequest>& requests,
                                  const SchedulerOptions& options);

// "scheduler-timeline" of the first `steps[i]` steps of schedules[i] (a schedule without an
// entry in steps: all of them): one row per slot-step that holds a request.
Table schedulerTimelineTable(const std::vector<const Schedule*>& schedules,
                             const std::vector<std::uint32_t>& steps = {});

// "scheduler-policies" (measured and simulated per policy), "scheduler-timeline" (slot x step
// -> request), "scheduler-checks" (invariants, exactness), "scheduler-costs" (the model),
// "scheduler-simulation" when a larger mix was simulated, the KV block map tables
// (kvBlockMapTables) and "prefix-sharing" when it ran.
std::vector<Table> schedulerTables(const SchedulerResult& result);

} // namespace inferscope::compute::experiments
