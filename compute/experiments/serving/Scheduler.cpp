#include "compute/experiments/serving/Scheduler.hpp"

#include "compute/experiments/bench/Bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {
using Clock = std::chrono::steady_clock;

double nearestRank(std::vector<double> values, double quantile) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    auto rank = std::size_t(std::ceil(quantile * double(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

std::uint32_t blocksFor(std::uint32_t positions, std::uint32_t blockSize) {
    return (positions + blockSize - 1) / blockSize;
}

std::vector<RequestShape> shapesOf(const std::vector<ServingRequest>& requests) {
    std::vector<RequestShape> shapes;
    for (const auto& r : requests)
        shapes.push_back({std::uint32_t(r.prompt.size()), r.outputTokens});
    return shapes;
}
} // namespace

// ---- The schedule ---------------------------------------------------------------------------

std::string policyName(BatchingPolicy policy) {
    switch (policy) {
    case BatchingPolicy::Static:
        return "static";
    case BatchingPolicy::Continuous:
        return "continuous";
    case BatchingPolicy::ContinuousChunked:
        return "continuous + chunked prefill";
    }
    return "?";
}

std::uint64_t Schedule::idleSlotSteps() const {
    std::uint64_t idle = 0;
    for (const auto& step : steps) idle += slotCount - step.generating;
    return idle;
}

std::uint64_t Schedule::paddingSlotSteps() const {
    std::uint64_t padding = 0;
    for (const auto& step : steps) padding += step.sequences - step.generating;
    return padding;
}

namespace {
// Continuous admission with a prompt-token budget per step (Sarathi-style chunked prefill).
Schedule buildChunkedSchedule(const std::vector<RequestShape>& requests, Schedule schedule,
                              std::uint32_t chunkTokens, const ScheduleStepSink& sink) {
    const auto slotCount = schedule.slotCount;
    std::vector<std::int32_t> holder(slotCount, -1);
    std::vector<std::uint32_t> pending(requests.size(), 0); // prompt tokens not yet prefilled
    std::vector<std::size_t> prefilling;                    // oldest admission first
    std::size_t next = 0;
    for (std::uint32_t t = 0;; ++t) {
        ScheduleStep step;
        step.cells.resize(slotCount);
        for (std::uint32_t s = 0; s < slotCount && next < requests.size(); ++s)
            if (holder[s] < 0) {
                auto& r = schedule.requests[next];
                r.slot = s;
                r.admitStep = t;
                ++step.admitted;
                pending[next] = requests[next].promptTokens;
                prefilling.push_back(next);
                holder[s] = std::int32_t(next++);
            }
        std::vector<char> fedSlot(slotCount, 0); // per slot: a chunk of its prompt ran
        std::uint32_t budget = chunkTokens;
        for (auto i : prefilling) {
            const auto take = std::min(budget, pending[i]);
            if (take == 0) break;
            budget -= take;
            pending[i] -= take;
            step.prefillTokens += take;
            ++step.prefillSequences;
            fedSlot[schedule.requests[i].slot] = 1;
            if (pending[i] == 0) {
                auto& r = schedule.requests[i];
                r.firstTokenStep = t;
                r.finishStep = t + requests[i].outputTokens - 1;
            }
        }
        std::erase_if(prefilling, [&](std::size_t i) { return pending[i] == 0; });
        bool any = false;
        for (std::uint32_t s = 0; s < slotCount; ++s) {
            if (holder[s] < 0) continue;
            any = true;
            const auto i = std::size_t(holder[s]);
            if (pending[i] > 0) {
                // Still prefilling: computed only when a chunk of it ran this step.
                step.cells[s] = {holder[s], SlotState::Prefilling};
                step.sequences += fedSlot[s] ? 1 : 0;
            } else {
                step.cells[s] = {holder[s], SlotState::Generating};
                ++step.sequences;
                ++step.generating;
            }
        }
        if (!any) break;
        sink(std::move(step));
        for (std::uint32_t s = 0; s < slotCount; ++s) {
            if (holder[s] < 0) continue;
            const auto i = std::size_t(holder[s]);
            if (pending[i] == 0 && schedule.requests[i].finishStep == t) {
                schedule.requests[i].returnStep = t;
                holder[s] = -1;
            }
        }
    }
    return schedule;
}
} // namespace

Schedule buildSchedule(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                       BatchingPolicy policy, std::uint32_t chunkTokens) {
    std::vector<ScheduleStep> steps;
    Schedule schedule =
        streamSchedule(requests, slotCount, policy, chunkTokens,
                       [&steps](ScheduleStep&& step) { steps.push_back(std::move(step)); });
    schedule.steps = std::move(steps);
    return schedule;
}

Schedule streamSchedule(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                        BatchingPolicy policy, std::uint32_t chunkTokens,
                        const ScheduleStepSink& sink) {
    if (slotCount == 0) throw std::invalid_argument("a schedule needs at least one slot");
    if (requests.empty()) throw std::invalid_argument("the request mix is empty");
    for (std::size_t i = 0; i < requests.size(); ++i)
        if (requests[i].promptTokens == 0 || requests[i].outputTokens == 0)
            throw std::invalid_argument("request " + std::to_string(i + 1) +
                                        " needs a prompt and at least one output token");
    Schedule schedule;
    schedule.policy = policy;
    schedule.slotCount = slotCount;
    schedule.requests.resize(requests.size());
    if (policy == BatchingPolicy::ContinuousChunked) {
        if (chunkTokens == 0)
            throw std::invalid_argument("chunked prefill needs a chunk of at least one prompt "
                                        "token per step (0 was asked)");
        return buildChunkedSchedule(requests, std::move(schedule), chunkTokens, sink);
    }
    auto newStep = [&] {
        ScheduleStep step;
        step.cells.resize(slotCount);
        return step;
    };
    auto admit = [&](ScheduleStep& step, std::size_t request, std::uint32_t slot, std::uint32_t t) {
        auto& r = schedule.requests[request];
        r.slot = slot;
        r.admitStep = t;
        r.firstTokenStep = t;
        r.finishStep = t + requests[request].outputTokens - 1;
        ++step.admitted;
        ++step.prefillSequences;
        step.prefillTokens += requests[request].promptTokens;
    };
    if (policy == BatchingPolicy::Static) {
        std::uint32_t start = 0; // the group's first step
        for (std::size_t first = 0; first < requests.size(); first += slotCount) {
            const std::size_t end = std::min(requests.size(), first + slotCount);
            std::uint32_t longest = 0;
            for (std::size_t i = first; i < end; ++i)
                longest = std::max(longest, requests[i].outputTokens);
            for (std::uint32_t k = 0; k < longest; ++k) {
                auto step = newStep();
                for (std::size_t i = first; i < end; ++i) {
                    const auto slot = std::uint32_t(i - first);
                    if (k == 0) admit(step, i, slot, start);
                    const bool generating = k < requests[i].outputTokens;
                    step.cells[slot] = {std::int32_t(i),
                                        generating ? SlotState::Generating : SlotState::Padding};
                    ++step.sequences;
                    step.generating += generating ? 1 : 0;
                }
                sink(std::move(step));
            }
            for (std::size_t i = first; i < end; ++i)
                schedule.requests[i].returnStep = start + longest - 1;
            start += longest;
        }
        return schedule;
    }
    std::vector<std::int32_t> holder(slotCount, -1);
    std::size_t next = 0;
    for (std::uint32_t t = 0;; ++t) {
        auto step = newStep();
        for (std::uint32_t s = 0; s < slotCount && next < requests.size(); ++s)
            if (holder[s] < 0) {
                admit(step, next, s, t);
                holder[s] = std::int32_t(next++);
            }
        bool any = false;
        for (std::uint32_t s = 0; s < slotCount; ++s)
            if (holder[s] >= 0) {
                any = true;
                step.cells[s] = {holder[s], SlotState::Generating};
                ++step.sequences;
                ++step.generating;
            }
        if (!any) break;
        sink(std::move(step));
        // A request that made its last token now frees its slot for the next step.
        for (std::uint32_t s = 0; s < slotCount; ++s)
            if (holder[s] >= 0 && schedule.requests[std::size_t(holder[s])].finishStep == t) {
                schedule.requests[std::size_t(holder[s])].returnStep = t;
                holder[s] = -1;
            }
    }
    return schedule;
}

std::vector<std::uint32_t> blocksPerStep(const Schedule& schedule,
                                         const std::vector<RequestShape>& requests,
                                         std::uint32_t blockSize) {
    std::vector<std::uint32_t> perStep;
    for (std::uint32_t t = 0; t < schedule.steps.size(); ++t) {
        std::uint32_t blocks = 0;
        for (const auto& cell : schedule.steps[t].cells) {
            if (cell.state == SlotState::Empty) continue;
            const auto& r = schedule.requests[std::size_t(cell.request)];
            // After step t the sequence holds its prompt and one position per later step.
            blocks += blocksFor(
                requests[std::size_t(cell.request)].promptTokens + (t - r.admitStep), blockSize);
        }
        perStep.push_back(blocks);
    }
    return perStep;
}

std::uint32_t peakBlocks(const Schedule& schedule, const std::vector<RequestShape>& requests,
                         std::uint32_t blockSize) {
    const auto perStep = blocksPerStep(schedule, requests, blockSize);
    return perStep.empty() ? 0 : *std::max_element(perStep.begin(), perStep.end());
}

std::uint32_t longestSequence(const Schedule& schedule, const std::vector<RequestShape>& requests) {
    std::uint32_t longest = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = schedule.requests[i];
        longest = std::max(longest, requests[i].promptTokens + (r.returnStep - r.admitStep));
    }
    return longest;
}

// ---- Costs ----------------------------------------------------------------------------------

double StepCostModel::stepMilliseconds(std::uint32_t sequences, std::uint32_t extraTokens) const {
    if (decode.empty()) throw std::invalid_argument("the step cost model has no measured points");
    if (sequences == 0) return 0;
    const double b = sequences;
    double ms = 0;
    if (b <= decode.front().batch) {
        ms = decode.front().stepMilliseconds; // below the first point: the weight-bound floor
    } else if (b >= decode.back().batch) {
        if (decode.size() == 1) {
            ms = decode.back().stepMilliseconds * b / decode.back().batch;
        } else {
            const auto& p = decode[decode.size() - 2];
            const auto& q = decode.back();
            const double slope = std::max(0.0, (q.stepMilliseconds - p.stepMilliseconds) /
                                                   double(q.batch - p.batch));
            ms = q.stepMilliseconds + slope * (b - q.batch);
        }
    } else {
        for (std::size_t i = 1; i < decode.size(); ++i)
            if (b <= decode[i].batch) {
                const auto& p = decode[i - 1];
                const auto& q = decode[i];
                ms = p.stepMilliseconds + (q.stepMilliseconds - p.stepMilliseconds) *
                                              (b - p.batch) / double(q.batch - p.batch);
                break;
            }
    }
    return ms + extraTokens * prefillMillisecondsPerToken;
}

std::vector<double> simulateStepSeconds(const Schedule& schedule, const StepCostModel& model) {
    std::vector<double> seconds;
    for (const auto& step : schedule.steps) seconds.push_back(model.stepSeconds(step));
    return seconds;
}

namespace {
// The figures from each request's steps and the seconds of every step.
PolicyFigures figuresOf(const std::vector<ScheduledRequest>& scheduled,
                        const std::vector<RequestShape>& requests, std::vector<double> stepSeconds,
                        std::uint64_t idleSlotSteps) {
    std::vector<double>& ends = stepSeconds; // in place: the running sum
    std::partial_sum(ends.begin(), ends.end(), ends.begin());
    PolicyFigures f;
    f.steps = std::uint32_t(ends.size());
    f.totalSeconds = ends.empty() ? 0 : ends.back();
    std::vector<double> latencies;
    std::uint64_t tokens = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = scheduled[i];
        latencies.push_back(ends[r.returnStep]);
        f.meanTimeToFirstToken += ends[r.firstTokenStep];
        tokens += requests[i].outputTokens;
    }
    f.meanTimeToFirstToken /= double(requests.size());
    f.meanLatency =
        std::accumulate(latencies.begin(), latencies.end(), 0.0) / double(latencies.size());
    f.p50Latency = nearestRank(latencies, 0.50);
    f.p99Latency = nearestRank(latencies, 0.99);
    f.tokensPerSecond = f.totalSeconds > 0 ? double(tokens) / f.totalSeconds : 0;
    f.idleSlotSteps = idleSlotSteps;
    return f;
}
} // namespace

PolicyFigures summarize(const Schedule& schedule, const std::vector<RequestShape>& requests,
                        const std::vector<double>& stepSeconds) {
    if (stepSeconds.size() != schedule.steps.size())
        throw std::invalid_argument("summarize: " + std::to_string(stepSeconds.size()) +
                                    " step times for " + std::to_string(schedule.steps.size()) +
                                    " steps");
    return figuresOf(schedule.requests, requests, stepSeconds, schedule.idleSlotSteps());
}

PolicyFigures simulatePolicy(const std::vector<RequestShape>& requests, std::uint32_t slotCount,
                             BatchingPolicy policy, std::uint32_t chunkTokens,
                             const StepCostModel& model) {
    std::vector<double> seconds;
    std::uint64_t idle = 0;
    const Schedule schedule =
        streamSchedule(requests, slotCount, policy, chunkTokens, [&](ScheduleStep&& step) {
            seconds.push_back(model.stepSeconds(step));
            idle += slotCount - step.generating;
        });
    return figuresOf(schedule.requests, requests, std::move(seconds), idle);
}

// ---- The real run ---------------------------------------------------------------------------

void checkFits(const Engine& engine, const Schedule& schedule,
               const std::vector<RequestShape>& shapes) {
    const auto& cache = engine.kvCache();
    if (schedule.slotCount > cache.maxSequences())
        throw std::invalid_argument(std::to_string(schedule.slotCount) +
                                    " slots exceed the engine's " +
                                    std::to_string(cache.maxSequences()) + " sequences");
    const auto longest = longestSequence(schedule, shapes);
    if (longest > cache.maxPositionsPerSequence())
        throw std::invalid_argument(
            "a request needs " + std::to_string(longest) + " positions (prompt + output" +
            (schedule.policy == BatchingPolicy::Static ? " + padding" : "") + "), more than the " +
            std::to_string(cache.maxPositionsPerSequence()) +
            " a sequence can hold (the model's context)");
    const auto peak = peakBlocks(schedule, shapes, cache.blockSize());
    if (peak > cache.capacityBlocks())
        throw std::invalid_argument("the " + policyName(schedule.policy) + " schedule needs " +
                                    std::to_string(peak) + " KV blocks at once; the cache has " +
                                    std::to_string(cache.capacityBlocks()));
}

EngineRun runSchedule(Engine& engine, const Schedule& schedule,
                      const std::vector<ServingRequest>& requests,
                      const std::function<void(const std::string&, int)>& progress,
                      const std::vector<std::uint32_t>& snapshotAt,
                      const std::function<void(std::uint32_t)>& onStep) {
    const auto shapes = shapesOf(requests);
    if (schedule.policy == BatchingPolicy::ContinuousChunked)
        throw std::invalid_argument("chunked prefill is simulated only; the engine runs the "
                                    "static and continuous schedules");
    if (schedule.requests.size() != requests.size())
        throw std::invalid_argument("the schedule was built for another mix");
    checkFits(engine, schedule, shapes);

    EngineRun run;
    run.tokens.resize(requests.size());
    std::vector<std::int32_t> last(requests.size(), 0);
    const auto savedProbes = engine.probes();
    engine.setProbes({});
    engine.reset();
    try {
        for (std::uint32_t t = 0; t < schedule.steps.size(); ++t) {
            const auto& step = schedule.steps[t];
            std::vector<SequenceInput> inputs;
            std::vector<std::size_t> owners;
            for (const auto& cell : step.cells) {
                if (cell.state == SlotState::Empty) continue;
                const auto r = std::size_t(cell.request);
                if (schedule.requests[r].admitStep == t)
                    inputs.push_back({SequenceId(r + 1), requests[r].prompt});
                else
                    inputs.push_back({SequenceId(r + 1), {last[r]}});
                owners.push_back(r);
            }
            const auto start = Clock::now();
            const auto result = engine.step(inputs);
            run.stepSeconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            run.peakBlocksInUse = std::max(run.peakBlocksInUse, engine.kvCache().usedBlocks());
            if (std::find(snapshotAt.begin(), snapshotAt.end(), t) != snapshotAt.end()) {
                run.blockSnapshots.push_back(
                    snapshotKvCache(engine.kvCache(),
                                    policyName(schedule.policy) + " step " + std::to_string(t + 1),
                                    std::int32_t(t), schedule.slotCount,
                                    engine.kvCache().maxPositionsPerSequence(), [&](SequenceId id) {
                                        const auto r = std::size_t(id - 1);
                                        return KvOwner{"request " + std::to_string(r + 1),
                                                       std::int32_t(schedule.requests.at(r).slot)};
                                    }));
            }
            std::size_t k = 0;
            for (const auto& cell : step.cells) {
                if (cell.state == SlotState::Empty) continue;
                const auto r = owners[k];
                last[r] = result.sequences[k++].argmax.back();
                if (cell.state == SlotState::Generating) run.tokens[r].push_back(last[r]);
                if (schedule.requests[r].returnStep == t) engine.release(SequenceId(r + 1));
            }
            if (onStep) onStep(t + 1);
            if (progress && (t % 8 == 0 || t + 1 == schedule.steps.size()))
                progress(policyName(schedule.policy) + " batching: step " + std::to_string(t + 1) +
                             " of " + std::to_string(schedule.steps.size()),
                         int(100 * (t + 1) / schedule.steps.size()));
        }
    } catch (...) {
        engine.reset();
        engine.setProbes(savedProbes);
        throw;
    }
    run.blocksInUseAfter = engine.kvCache().usedBlocks();
    // In the order asked for (taken in step order).
    auto rank = [&](const KvBlockSnapshot& s) {
        return std::find(snapshotAt.begin(), snapshotAt.end(), std::uint32_t(s.step)) -
               snapshotAt.begin();
    };
    std::stable_sort(run.blockSnapshots.begin(), run.blockSnapshots.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    engine.reset();
    engine.setProbes(savedProbes);
    return run;
}

std::vector<std::int32_t> decodeAlone(Engine& engine, const ServingRequest& request) {
    const SequenceId id = ~SequenceId(0);
    std::vector<std::int32_t> tokens;
    auto step = engine.step({{id, request.prompt}});
    tokens.push_back(step.sequences[0].argmax.back());
    while (tokens.size() < request.outputTokens) {
        step = engine.step({{id, {tokens.back()}}});
        tokens.push_back(step.sequences[0].argmax.back());
    }
    engine.release(id);
    return tokens;
}

// ---- The experiment -------------------------------------------------------------------------

SchedulerResult compareSchedulers(Engine& engine, const std::vector<ServingRequest>& requests,
                                  const SchedulerOptions& options) {
    auto report = [&](const std::string& stage, int percent) {
        if (options.progress) options.progress(stage, percent);
    };
    SchedulerResult result;
    result.slotCount = options.slotCount;
    result.shapes = shapesOf(requests);
    // Both schedules first: bad input fails before anything is measured.
    std::vector<PolicyResult> policies;
    for (auto policy : {BatchingPolicy::Static, BatchingPolicy::Continuous}) {
        PolicyResult p;
        p.policy = policy;
        p.schedule = buildSchedule(result.shapes, options.slotCount, policy);
        policies.push_back(std::move(p));
    }

    for (const auto& p : policies) checkFits(engine, p.schedule, result.shapes);
    result.chunkTokens = options.chunkTokens;
    const auto chunked = buildSchedule(result.shapes, options.slotCount,
                                       BatchingPolicy::ContinuousChunked, options.chunkTokens);

    // Step costs over B = 1, 2, 4, ... slots, at about the mix's typical context.
    BatchSweepOptions sweep;
    sweep.batches.clear();
    for (std::uint32_t b = 1; b < options.slotCount; b *= 2) sweep.batches.push_back(b);
    sweep.batches.push_back(options.slotCount);
    double promptMean = 0, outputMean = 0;
    for (const auto& s : result.shapes) {
        promptMean += s.promptTokens;
        outputMean += s.outputTokens;
    }
    promptMean /= double(result.shapes.size());
    outputMean /= double(result.shapes.size());
    sweep.context =
        std::max<std::uint32_t>(1, std::uint32_t(std::lround(promptMean + outputMean / 2)));
    sweep.steps = std::max<std::uint32_t>(1, options.costSweepSteps);
    sweep.exactnessSequences = 0;
    sweep.progress = [&](const std::string& stage, int percent) {
        report("Step costs: " + stage, percent / 10);
    };
    const auto costs = runBatchSweep(engine, sweep);
    result.costs.decode = costs.curve();
    // The prefill cost per token of the largest measured batch (the most tokens, least noise).
    result.costs.prefillMillisecondsPerToken = costs.points.back().prefillMillisecondsPerToken;

    result.chunkedSimulated =
        summarize(chunked, result.shapes, simulateStepSeconds(chunked, result.costs));
    // The timeline so far: the policies already run whole, the running one to its step.
    auto lastTimeline = Clock::now();
    auto publishTimeline = [&](std::size_t running, std::uint32_t steps, bool ended) {
        if (!options.onTimeline) return;
        const auto now = Clock::now();
        if (!ended &&
            std::chrono::duration<double>(now - lastTimeline).count() < options.onTimelineSeconds)
            return;
        lastTimeline = now;
        std::vector<const Schedule*> schedules;
        std::vector<std::uint32_t> shown;
        for (std::size_t i = 0; i <= running; ++i) {
            schedules.push_back(&policies[i].schedule);
            shown.push_back(i < running ? std::uint32_t(policies[i].schedule.steps.size()) : steps);
        }
        options.onTimeline(schedulerTimelineTable(schedules, shown));
    };
    int done = 0;
    for (auto& p : policies) {
        p.simulated =
            summarize(p.schedule, result.shapes, simulateStepSeconds(p.schedule, result.costs));
        // The block map of the continuous run: its peak step and a few spread over the run.
        std::vector<std::uint32_t> snapshotAt;
        if (p.policy == BatchingPolicy::Continuous && options.blockSnapshots > 0)
            snapshotAt = snapshotSteps(
                blocksPerStep(p.schedule, result.shapes, engine.kvCache().blockSize()),
                options.blockSnapshots - 1);
        p.run = runSchedule(
            engine, p.schedule, requests,
            [&](const std::string& stage, int pc) {
                report(stage, 10 + done * 40 + pc * 40 / 100);
            },
            snapshotAt,
            [&](std::uint32_t steps) {
                publishTimeline(std::size_t(done), steps, steps == p.schedule.steps.size());
            });
        if (!p.run.blockSnapshots.empty()) {
            p.run.blockSnapshots.front().label += " (peak blocks)";
            result.blockSnapshots = p.run.blockSnapshots;
        }
        p.measured = summarize(p.schedule, result.shapes, p.run.stepSeconds);
        ++done;
    }
    for (std::uint32_t i = 0; i < std::min<std::size_t>(options.verifyRequests, requests.size());
         ++i) {
        report("Request " + std::to_string(i + 1) + " decoded alone", 92);
        const auto alone = decodeAlone(engine, requests[i]);
        SchedulerResult::Verification v;
        v.request = i;
        v.tokens = std::uint32_t(alone.size());
        v.staticEqual = policies[0].run.tokens[i] == alone;
        v.continuousEqual = policies[1].run.tokens[i] == alone;
        result.verified.push_back(v);
    }
    engine.reset();
    result.policies = std::move(policies);

    if (options.simulateRequests > 0) {
        report("Simulating " + std::to_string(options.simulateRequests) + " requests", 97);
        RequestMixSpec large = options.mix;
        large.requests = options.simulateRequests;
        large.total = std::uint32_t(std::llround(double(options.mix.total) *
                                                 options.simulateRequests / options.mix.requests));
        const auto lengths = skewedLengths(large);
        std::vector<RequestShape> shapes;
        const auto prompt = std::max<std::uint32_t>(1, std::uint32_t(std::lround(promptMean)));
        for (auto l : lengths) shapes.push_back({prompt, l});
        result.largeRequests = options.simulateRequests;
        result.largeSlots = options.simulateSlots ? options.simulateSlots : options.slotCount;
        for (auto policy : {BatchingPolicy::Static, BatchingPolicy::Continuous,
                            BatchingPolicy::ContinuousChunked}) {
            const auto figures = simulatePolicy(shapes, result.largeSlots, policy,
                                                options.chunkTokens, result.costs);
            (policy == BatchingPolicy::Static       ? result.largeStatic
             : policy == BatchingPolicy::Continuous ? result.largeContinuous
                                                    : result.largeChunked) = figures;
        }
    }
    report("Done", 100);
    return result;
}

Table schedulerTimelineTable(const std::vector<const Schedule*>& schedules,
                             const std::vector<std::uint32_t>& steps) {
    Table timeline;
    timeline.id = "scheduler-timeline";
    timeline.title = "Which request holds each slot at each step";
    timeline.addColumn("policy").addColumn("step").addColumn("slot").addColumn("request").addColumn(
        "state");
    for (std::size_t i = 0; i < schedules.size(); ++i) {
        const auto& schedule = *schedules[i];
        const std::size_t shown = i < steps.size()
                                      ? std::min<std::size_t>(steps[i], schedule.steps.size())
                                      : schedule.steps.size();
        for (std::size_t t = 0; t < shown; ++t)
            for (std::size_t s = 0; s < schedule.slotCount; ++s) {
                const auto& cell = schedule.steps[t].cells[s];
                if (cell.state == SlotState::Empty) continue;
                timeline.addRow(
                    {policyName(schedule.policy), std::int64_t(t), std::int64_t(s),
                     std::int64_t(cell.request + 1),
                     std::string(cell.state == SlotState::Generating ? "generating" : "padding")});
            }
    }
    timeline.notes.push_back("Slots and steps not listed are empty (no request).");
    return timeline;
}

std::vector<Table> schedulerTables(const SchedulerResult& r) {
    std::uint64_t tokens = 0;
    for (const auto& s : r.shapes) tokens += s.outputTokens;
    Table policies;
    policies.id = "scheduler-policies";
    policies.title = "Static vs continuous batching: " + std::to_string(r.shapes.size()) +
                     " requests, " + groupThousands(std::int64_t(tokens)) + " output tokens, " +
                     std::to_string(r.slotCount) + " slots";
    policies.addColumn("policy")
        .addColumn("figures")
        .addColumn("total", "s", 2)
        .addColumn("tokens/s", "", 1)
        .addColumn("mean latency", "s", 2)
        .addColumn("p50 latency", "s", 2)
        .addColumn("p99 latency", "s", 2)
        .addColumn("mean TTFT", "s", 3)
        .addColumn("idle slot-steps")
        .addColumn("steps")
        .addColumn("simulation error", "%", 1);
    auto addFigures = [&](const std::string& policy, const std::string& kind,
                          const PolicyFigures& f, Cell error) {
        policies.addRow({policy, kind, f.totalSeconds, f.tokensPerSecond, f.meanLatency,
                         f.p50Latency, f.p99Latency, f.meanTimeToFirstToken,
                         std::int64_t(f.idleSlotSteps), std::int64_t(f.steps), error});
    };
    for (const auto& p : r.policies) {
        addFigures(policyName(p.policy), "measured", p.measured, Cell{});
        const double error = p.measured.totalSeconds > 0
                                 ? 100.0 * (p.simulated.totalSeconds - p.measured.totalSeconds) /
                                       p.measured.totalSeconds
                                 : 0.0;
        addFigures(policyName(p.policy), "simulated", p.simulated, error);
    }
    if (r.chunkTokens > 0)
        addFigures(policyName(BatchingPolicy::ContinuousChunked) + " (" +
                       std::to_string(r.chunkTokens) + " tokens/step)",
                   "simulated only", r.chunkedSimulated, Cell{});
    if (r.policies.size() == 2 && r.policies[0].measured.tokensPerSecond > 0 &&
        r.policies[1].measured.meanLatency > 0)
        policies.notes.push_back(
            "Measured: continuous batching gives " +
            fixed(r.policies[1].measured.tokensPerSecond / r.policies[0].measured.tokensPerSecond,
                  2) +
            "x the throughput and " +
            fixed(r.policies[0].measured.meanLatency / r.policies[1].measured.meanLatency, 1) +
            "x lower mean latency than static batching.");
    policies.notes.push_back(
        "All requests are queued at time 0; latency is when a request's answer returns (static: "
        "when its group's longest member is done), TTFT when its first token is made; "
        "percentiles by nearest rank. Static groups compute padding for finished members.");
    policies.notes.push_back("Simulated: the same schedule costed by the measured step time over "
                             "B (scheduler-costs), simulation error = simulated total vs "
                             "measured total.");
    if (r.chunkTokens > 0)
        policies.notes.push_back(
            "Chunked prefill (simulated only, not run on the engine): continuous admission, but "
            "at most " +
            std::to_string(r.chunkTokens) +
            " prompt tokens are prefilled per step, oldest request first, beside the decodes; a "
            "request's first token comes with its last prompt chunk. Same step cost model.");

    std::vector<const Schedule*> schedules;
    for (const auto& p : r.policies) schedules.push_back(&p.schedule);
    const Table timeline = schedulerTimelineTable(schedules);

    Table checks;
    checks.id = "scheduler-checks";
    checks.title = "Checks: every request once, no leaked KV blocks, tokens equal a run alone";
    checks.addColumn("check").addColumn("static").addColumn("continuous");
    auto both = [&](const std::string& name, auto value) {
        if (r.policies.size() == 2)
            checks.addRow({name, value(r.policies[0]), value(r.policies[1])});
    };
    both("requests finished with all their tokens", [&](const PolicyResult& p) -> Cell {
        std::int64_t complete = 0;
        for (std::size_t i = 0; i < r.shapes.size(); ++i)
            complete +=
                p.run.tokens.size() > i && p.run.tokens[i].size() == r.shapes[i].outputTokens;
        return complete;
    });
    both("KV blocks still held after the run",
         [](const PolicyResult& p) -> Cell { return std::int64_t(p.run.blocksInUseAfter); });
    both("peak KV blocks in use",
         [](const PolicyResult& p) -> Cell { return std::int64_t(p.run.peakBlocksInUse); });
    for (const auto& v : r.verified)
        checks.addRow({"request " + std::to_string(v.request + 1) + ": " +
                           std::to_string(v.tokens) + " tokens equal it alone",
                       std::string(v.staticEqual ? "yes" : "no"),
                       std::string(v.continuousEqual ? "yes" : "no")});

    Table costs;
    costs.id = "scheduler-costs";
    costs.title = "Measured step cost over B (the simulator's input)";
    costs.addColumn("B").addColumn("step", "ms", 2);
    for (const auto& p : r.costs.decode) costs.addRow({std::int64_t(p.batch), p.stepMilliseconds});
    costs.notes.push_back("Prefill: " + fixed(r.costs.prefillMillisecondsPerToken, 3) +
                          " ms per prompt token beyond one per sequence. Between points linear; "
                          "above the last, extended with the last slope.");

    std::vector<Table> tables{policies, timeline, checks, costs};
    if (r.largeRequests > 0) {
        Table large;
        large.id = "scheduler-simulation";
        large.title = "Simulated: " + groupThousands(r.largeRequests) + " requests on " +
                      std::to_string(r.largeSlots) + " slots";
        large.addColumn("policy")
            .addColumn("total", "s", 1)
            .addColumn("tokens/s", "", 1)
            .addColumn("mean latency", "s", 2)
            .addColumn("p99 latency", "s", 2)
            .addColumn("mean TTFT", "s", 3)
            .addColumn("idle slot-steps")
            .addColumn("steps");
        const std::string chunkedName = policyName(BatchingPolicy::ContinuousChunked) + " (" +
                                        std::to_string(r.chunkTokens) + " tokens/step)";
        for (auto [name, f] : {std::pair{std::string("static"), r.largeStatic},
                               std::pair{std::string("continuous"), r.largeContinuous},
                               std::pair{chunkedName, r.largeChunked}})
            large.addRow({name, f.totalSeconds, f.tokensPerSecond, f.meanLatency, f.p99Latency,
                          f.meanTimeToFirstToken, std::int64_t(f.idleSlotSteps),
                          std::int64_t(f.steps)});
        if (!r.costs.decode.empty() && r.largeSlots > r.costs.decode.back().batch)
            large.notes.push_back(
                "Step costs above B = " + std::to_string(r.costs.decode.back().batch) +
                " are extrapolated from the last measured slope.");
        large.notes.push_back("Every figure here is simulated from the measured step costs.");
        tables.push_back(large);
    }
    for (auto& t : kvBlockMapTables(r.blockSnapshots)) tables.push_back(std::move(t));
    if (r.prefixSharing) tables.push_back(prefixSharingTable(*r.prefixSharing));
    return tables;
}

} // namespace inferscope::compute::experiments
