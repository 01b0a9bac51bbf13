#include "compute/experiments/batching/BatchingSweep.hpp"

#include "compute/SampleSpread.hpp"
#include "compute/Stopwatch.hpp"
#include "compute/experiments/bench/Bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

// Sequence s of a sweep: the shared prefix, then its own tail, so every sequence decodes
// different tokens.
std::vector<std::int32_t> sequencePrompt(std::uint32_t s, std::uint32_t context,
                                         std::uint32_t vocab, std::uint32_t prefix) {
    auto prompt = benchPrompt(context, vocab, 1);
    const auto own = benchPrompt(context, vocab, s + 1);
    std::copy(own.begin() + prefix, own.end(), prompt.begin() + prefix);
    return prompt;
}

// Sequence ids of the prefilled templates each point forks (the working copies are 1..B).
constexpr SequenceId kTemplateBase = SequenceId(1) << 40;

// Greedy tokens of one point: per sequence, the prefill's token then one per decode step.
using TokenStreams = std::vector<std::vector<std::int32_t>>;

std::vector<SequenceInput> nextInputs(const StepResult& step, TokenStreams& streams) {
    std::vector<SequenceInput> inputs;
    for (std::size_t s = 0; s < step.sequences.size(); ++s) {
        const auto token = step.sequences[s].argmax.back();
        streams[s].push_back(token);
        inputs.push_back({step.sequences[s].sequence, {token}});
    }
    return inputs;
}
} // namespace

std::optional<std::size_t> findKnee(const std::vector<BatchCurvePoint>& curve, double fraction) {
    for (std::size_t i = 0; i < curve.size(); ++i) {
        if (curve[i].batch == 0 || !(curve[i].stepMilliseconds > 0))
            throw std::invalid_argument("findKnee: every point needs a batch and a positive step "
                                        "time");
        if (i > 0 && curve[i].batch <= curve[i - 1].batch)
            throw std::invalid_argument("findKnee: batch sizes must rise strictly");
    }
    if (curve.size() < 2) return std::nullopt;
    const double perSequence = curve[0].tokensPerSecond() / curve[0].batch;
    for (std::size_t i = 1; i < curve.size(); ++i) {
        const double added = double(curve[i].batch - curve[i - 1].batch);
        const double marginal =
            (curve[i].tokensPerSecond() - curve[i - 1].tokensPerSecond()) / added;
        const double noise = std::hypot(curve[i].tokensPerSecondStandardError(),
                                        curve[i - 1].tokensPerSecondStandardError()) /
                             added;
        if (marginal + kKneeConfidence * noise < fraction * perSequence) return i - 1;
    }
    return std::nullopt;
}

std::string kneeRuleText(double fraction) {
    return "knee: the last B before the first step up in B where each added sequence buys less "
           "than " +
           fixed(100 * fraction, 0) +
           "% of the tokens/s of one sequence at the first point, beyond the noise (95%, "
           "from the spread of each B's timed steps; weight-bound, an added sequence is nearly "
           "free; compute-bound, it buys nothing)";
}

std::vector<BatchCurvePoint> BatchSweepResult::curve() const {
    std::vector<BatchCurvePoint> points;
    for (const auto& p : this->points)
        points.push_back({p.batch, p.stepMilliseconds,
                          steps > 1 ? p.stepSpreadMilliseconds / std::sqrt(double(steps)) : 0});
    return points;
}

bool BatchSweepResult::exact() const {
    return std::all_of(exactness.begin(), exactness.end(),
                       [](const ExactnessCheck& c) { return c.equal(); });
}

SweepLayout sweepLayout(const Engine& engine, std::uint32_t context) {
    const std::uint32_t block = engine.kvCache().blockSize();
    SweepLayout layout;
    layout.prefix = context > block ? (context - 1) / block * block : 0;
    layout.tail = context - layout.prefix;
    return layout;
}

std::uint32_t maxBatchForContext(const Engine& engine, std::uint32_t context, std::uint32_t steps) {
    const auto& cache = engine.kvCache();
    const std::uint32_t block = cache.blockSize();
    const auto layout = sweepLayout(engine, context);
    // The shared prefix once; per sequence its template's tail block(s) and the blocks its
    // working copy adds past the shared full blocks. Templates and copies: two per B.
    const std::uint32_t prefixBlocks = layout.prefix / block;
    const std::uint32_t tailBlocks = (layout.tail + block - 1) / block;
    const std::uint32_t sharedFull = context / block;
    const std::uint32_t ownBlocks = (context + steps + 1 + block - 1) / block - sharedFull;
    if (cache.capacityBlocks() <= prefixBlocks) return 0;
    return std::min(cache.maxSequences() / 2,
                    (cache.capacityBlocks() - prefixBlocks) / (tailBlocks + ownBlocks));
}

BatchSweepResult runBatchSweep(Engine& engine, const BatchSweepOptions& options) {
    if (options.batches.empty()) throw std::invalid_argument("no batch sizes to measure");
    for (auto b : options.batches)
        if (b == 0) throw std::invalid_argument("a batch of 0 sequences decodes nothing");
    if (options.steps == 0) throw std::invalid_argument("the sweep needs at least one timed step");
    if (!engine.cached())
        throw std::invalid_argument("the batching sweep measures the cached engine (turn the KV "
                                    "cache back on)");
    if (options.context == 0)
        throw std::invalid_argument("each sequence needs a cache of at least one token");
    // Prefill token, one untimed step, the timed steps: each appends one position.
    const std::uint32_t positions = options.context + options.steps + 1;
    const std::uint32_t perSequence = engine.kvCache().maxPositionsPerSequence();
    if (positions > perSequence)
        throw std::invalid_argument("a context of " + std::to_string(options.context) +
                                    " tokens plus " + std::to_string(options.steps + 1) +
                                    " decode steps exceeds the " + std::to_string(perSequence) +
                                    " positions a sequence can hold (the model's context)");

    BatchSweepResult result;
    result.device = engine.context().info().name;
    result.weightFormat = engine.weightFormatLabel();
    result.context = options.context;
    result.steps = options.steps;
    result.kneeFraction = options.kneeFraction;
    result.matrixBytes = matrixBytesPerDecodeStep(engine);
    result.kvBytesPerToken = engine.kvCache().kvBytesPerToken();
    result.readBytesPerSecond = options.readBytesPerSecond;
    result.maxBatch = maxBatchForContext(engine, options.context, options.steps);
    auto batches = options.batches;
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    result.requested = batches;
    std::vector<std::uint32_t> leftOut;
    for (auto b : batches)
        if (b > result.maxBatch) leftOut.push_back(b);
    batches.erase(
        std::remove_if(batches.begin(), batches.end(), [&](auto b) { return b > result.maxBatch; }),
        batches.end());
    if (batches.empty())
        throw std::invalid_argument("the KV cache holds at most " +
                                    std::to_string(result.maxBatch) + " sequences of " +
                                    std::to_string(positions) + " positions");
    if (!leftOut.empty()) {
        std::string list;
        for (auto b : leftOut) list += (list.empty() ? "" : ", ") + std::to_string(b);
        result.capNote = "B = " + list + " left out: the KV cache (" +
                         std::to_string(engine.kvCache().capacityBlocks()) + " blocks of " +
                         std::to_string(engine.kvCache().blockSize()) + " positions, at most " +
                         std::to_string(engine.kvCache().maxSequences()) +
                         " sequences with their templates) holds at most " +
                         std::to_string(result.maxBatch) + " sequences of " +
                         std::to_string(positions) + " positions";
    }

    const auto vocab = engine.config().vocabSize;
    const auto savedProbes = engine.probes();
    engine.setProbes({});
    engine.reset();
    const double bandwidth = options.readBytesPerSecond;
    auto report = [&](const std::string& stage, int percent) {
        if (options.progress) options.progress(stage, percent);
    };
    // Every sequence's cache: one shared prompt over the full blocks below C (prefilled once,
    // then forked: reference-counted blocks), and a distinct tail per sequence. The sequences
    // of the largest B are prefilled once as templates; each point forks them (all of C when
    // it fills whole blocks), so no point pays a prefill of B x C tokens.
    const auto layout = sweepLayout(engine, options.context);
    const auto templates = batches.back();
    TokenStreams lastStreams;
    double prefillMsPerToken = 0;
    try {
        report("Prefill: a shared prompt of " + std::to_string(layout.prefix) + " tokens, then " +
                   std::to_string(templates) + " distinct tails of " + std::to_string(layout.tail) +
                   " tokens",
               0);
        std::vector<SequenceInput> tails;
        const SequenceId prefixId = kTemplateBase - 1;
        if (layout.prefix > 0) {
            auto prompt = sequencePrompt(0, options.context, vocab, layout.prefix);
            prompt.resize(layout.prefix);
            engine.step({{prefixId, prompt}});
        }
        for (std::uint32_t s = 0; s < templates; ++s) {
            const auto prompt = sequencePrompt(s, options.context, vocab, layout.prefix);
            if (layout.prefix > 0) engine.forkSequence(prefixId, kTemplateBase + s);
            tails.push_back({kTemplateBase + s, std::vector<std::int32_t>(
                                                    prompt.begin() + layout.prefix, prompt.end())});
        }
        if (layout.prefix > 0) engine.release(prefixId);
        auto start = Clock::now();
        const auto prefilled = engine.step(tails);
        prefillMsPerToken = millisecondsSince(start) / (double(templates) * layout.tail);
        std::vector<std::int32_t> templateNext;
        for (const auto& out : prefilled.sequences) templateNext.push_back(out.argmax.back());

        for (std::size_t index = 0; index < batches.size(); ++index) {
            const auto batch = batches[index];
            const int percent = int(5 + 85 * index / batches.size());
            report("B = " + std::to_string(batch) + ": " + std::to_string(options.steps) +
                       " timed decode steps",
                   percent);
            TokenStreams streams(batch);
            std::vector<SequenceInput> rest;
            for (std::uint32_t s = 0; s < batch; ++s) {
                const auto shared = engine.forkSequence(kTemplateBase + s, SequenceId(s + 1));
                if (shared < options.context) {
                    const auto prompt = sequencePrompt(s, options.context, vocab, layout.prefix);
                    rest.push_back({SequenceId(s + 1), std::vector<std::int32_t>(
                                                           prompt.begin() + shared, prompt.end())});
                }
            }
            std::vector<SequenceInput> inputs;
            if (!rest.empty()) {
                inputs = nextInputs(engine.step(rest), streams);
            } else {
                for (std::uint32_t s = 0; s < batch; ++s) {
                    streams[s].push_back(templateNext[s]);
                    inputs.push_back({SequenceId(s + 1), {templateNext[s]}});
                }
            }
            auto step = engine.step(inputs); // untimed: first use of this batch shape
            inputs = nextInputs(step, streams);
            // Each step timed on its own: the repeats give the mean and its spread.
            double totalMs = 0, sumOfSquares = 0;
            for (std::uint32_t i = 0; i < options.steps; ++i) {
                start = Clock::now();
                step = engine.step(inputs);
                const double stepMs = millisecondsSince(start);
                totalMs += stepMs;
                sumOfSquares += stepMs * stepMs;
                inputs = nextInputs(step, streams);
            }
            for (std::uint32_t s = 0; s < batch; ++s) engine.release(SequenceId(s + 1));
            BatchSweepPoint point;
            point.batch = batch;
            point.stepMilliseconds = totalMs / options.steps;
            point.stepSpreadMilliseconds =
                sampleStandardDeviation(totalMs, sumOfSquares, options.steps);
            point.tokensPerSecond = batch * 1e3 / point.stepMilliseconds;
            point.msPerTokenPerRequest = point.stepMilliseconds;
            point.prefillMillisecondsPerToken = prefillMsPerToken;
            if (bandwidth > 0) {
                point.rooflineWeightsMilliseconds = double(result.matrixBytes) / bandwidth * 1e3;
                // Mid-run, each sequence's attention reads about context + steps/2 positions.
                const double kvBytes = double(batch) * (options.context + options.steps / 2.0) *
                                       double(result.kvBytesPerToken);
                point.rooflineWithKvMilliseconds =
                    (double(result.matrixBytes) + kvBytes) / bandwidth * 1e3;
            }
            const auto& first = result.points.empty() ? point : result.points.front();
            point.throughputMultiplier = point.tokensPerSecond / first.tokensPerSecond;
            point.latencyMultiplier = point.stepMilliseconds / first.stepMilliseconds;
            result.points.push_back(point);
            lastStreams = std::move(streams);
        }

        // Exactness at the largest measured batch: chosen sequences decoded again alone, from
        // their whole prompt (no shared blocks).
        engine.reset();
        const auto batch = batches.back();
        std::vector<std::uint32_t> chosen;
        for (std::uint32_t s : {0u, batch - 1, batch / 2, 1u})
            if (s < batch && chosen.size() < options.exactnessSequences &&
                std::find(chosen.begin(), chosen.end(), s) == chosen.end())
                chosen.push_back(s);
        for (auto s : chosen) {
            report("Exactness: sequence " + std::to_string(s + 1) +
                       " of B = " + std::to_string(batch) + " decoded alone",
                   95);
            const auto& batched = lastStreams[s];
            std::vector<std::int32_t> alone;
            auto step = engine.step(
                {{SequenceId(1), sequencePrompt(s, options.context, vocab, layout.prefix)}});
            alone.push_back(step.sequences[0].argmax.back());
            while (alone.size() < batched.size()) {
                step = engine.step({{SequenceId(1), {alone.back()}}});
                alone.push_back(step.sequences[0].argmax.back());
            }
            engine.reset();
            ExactnessCheck check;
            check.batch = batch;
            check.sequence = s;
            check.tokens = std::uint32_t(batched.size());
            for (std::size_t i = 0; i < batched.size(); ++i)
                if (batched[i] != alone[i]) {
                    check.firstMismatch = std::int32_t(i);
                    break;
                }
            result.exactness.push_back(check);
        }
    } catch (...) {
        engine.reset();
        engine.setProbes(savedProbes);
        throw;
    }
    engine.setProbes(savedProbes);
    result.knee = findKnee(result.curve(), options.kneeFraction);
    report("Done", 100);
    return result;
}

std::vector<Table> batchSweepTables(const BatchSweepResult& r) {
    Table sweep;
    sweep.id = "batching-sweep";
    sweep.title = "Batched decode: B sequences with a cache of " + std::to_string(r.context) +
                  " tokens each, one token per step (" + r.weightFormat + ", " + r.device + ")";
    sweep.addColumn("B")
        .addColumn("step", "ms", 2)
        .addColumn("step sd", "ms", 2)
        .addColumn("tokens/s", "", 1)
        .addColumn("per request", "ms/token", 2)
        .addColumn("throughput", "x", 2)
        .addColumn("latency", "x", 2)
        .addColumn("roofline weights", "ms", 2)
        .addColumn("roofline weights+KV", "ms", 2)
        .addColumn("measured / roofline", "x", 2)
        .addColumn("prefill", "ms/token", 3);
    for (const auto& p : r.points) {
        const double floor = p.rooflineWithKvMilliseconds;
        sweep.addRow({std::int64_t(p.batch), p.stepMilliseconds,
                      r.steps > 1 ? Cell(p.stepSpreadMilliseconds) : Cell{}, p.tokensPerSecond,
                      p.msPerTokenPerRequest, p.throughputMultiplier, p.latencyMultiplier,
                      r.readBytesPerSecond > 0 ? Cell(p.rooflineWeightsMilliseconds) : Cell{},
                      r.readBytesPerSecond > 0 ? Cell(floor) : Cell{},
                      floor > 0 ? Cell(p.stepMilliseconds / floor) : Cell{},
                      p.prefillMillisecondsPerToken});
    }
    const std::string first = r.points.empty() ? "1" : std::to_string(r.points.front().batch);
    sweep.notes.push_back("Each cache: a prompt shared by all sequences over its full blocks "
                          "(forkSequence), then a distinct tail, so every sequence decodes its "
                          "own tokens; prefill = the tails' prefill per token.");
    sweep.notes.push_back("Mean of " + std::to_string(r.steps) +
                          " timed decode steps per B, after one untimed step (sd: their "
                          "spread, which the knee rule weighs); multipliers are against B = " +
                          first + ".");
    if (r.readBytesPerSecond > 0)
        sweep.notes.push_back(
            "Roofline: a decode step reads every weight matrix once whatever B (" +
            humanBytes(double(r.matrixBytes)) + " at the measured " +
            fixed(r.readBytesPerSecond / 1e9, 1) + " GB/s), plus each sequence's KV cache (" +
            groupThousands(std::int64_t(r.kvBytesPerToken)) +
            " bytes per token); its time is the weight-bound floor.");
    if (!r.capNote.empty()) sweep.notes.push_back(r.capNote + ".");

    Table knee;
    knee.id = "batching-knee";
    knee.title = "Where batching stops paying";
    knee.addColumn("B")
        .addColumn("tokens/s", "", 1)
        .addColumn("throughput", "x", 2)
        .addColumn("latency", "x", 2);
    if (r.knee) {
        const auto& p = r.points[*r.knee];
        knee.addRow({std::int64_t(p.batch), p.tokensPerSecond, p.throughputMultiplier,
                     p.latencyMultiplier});
    }
    knee.notes.push_back(kneeRuleText(r.kneeFraction) + ".");
    if (!r.knee)
        knee.notes.push_back("No knee within the measured sizes: every step up in B still paid, "
                             "or what it lost was within the steps' spread.");

    Table exact;
    exact.id = "batching-exactness";
    exact.title = "Batched tokens vs the same sequence alone (greedy)";
    exact.addColumn("B")
        .addColumn("sequence")
        .addColumn("tokens")
        .addColumn("equal")
        .addColumn("first mismatch");
    for (const auto& c : r.exactness)
        exact.addRow({std::int64_t(c.batch), std::int64_t(c.sequence + 1), std::int64_t(c.tokens),
                      std::string(c.equal() ? "yes" : "no"),
                      c.equal() ? Cell{} : Cell(std::int64_t(c.firstMismatch))});
    exact.notes.push_back(r.exact() ? "Batching is exact here: every checked sequence decoded the "
                                      "same tokens alone."
                                    : "A checked sequence decoded different tokens alone: the "
                                      "batched kernels round differently.");
    return {sweep, knee, exact};
}

} // namespace inferscope::compute::experiments
