// The serving lab on the real engine over a small synthetic model (lavapipe): batched decode
// tokens equal each sequence alone, the sweep caps B by the KV cache and says so, both
// schedulers produce every request's tokens exactly as the request alone, and no KV block is
// still held after a run.
#include "compute/engine/Engine.hpp"
#include "compute/experiments/batching/BatchingSweep.hpp"
#include "compute/experiments/serving/Scheduler.hpp"
#include "models/LoadedModel.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

class TestServingEngine : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<models::LoadedModel> model_;

    EngineOptions options(std::uint32_t capacity = 4096) const {
        EngineOptions o;
        o.weightFormat = WeightFormat::F32;
        o.kvCapacityTokens = capacity;
        return o;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = 64;
        spec.vocabSize = 300;
        spec.seed = 11;
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "model.gguf";
        models::writeSyntheticGguf(spec, path);
        model_ = std::make_unique<models::LoadedModel>(models::loadModel(path));
    }

    // A batch-invariant engine gives a sequence's rows the same logits, bit for bit, whether
    // it is stepped alone or beside 12 others (prefill tiles over 8 tokens and a decode batch
    // past the fused-attention limit otherwise), for a float and a 4-bit format.
    void batchInvariantRowsEqualTheRowAlone() {
        for (const auto format : {WeightFormat::F32, WeightFormat::Q4_1}) {
            auto o = options();
            o.weightFormat = format;
            o.batchInvariant = true;
            Engine engine(*model_, o);
            QVERIFY(engine.batchInvariant());
            std::vector<std::int32_t> prompt;
            for (int i = 0; i < 21; ++i) prompt.push_back((i * 37 + 5) % 300);
            // Prefill, then three greedy decode steps; the logits of every step.
            auto run = [&](std::uint32_t neighbours) {
                engine.reset();
                std::vector<std::vector<float>> logits;
                std::vector<SequenceInput> batch{{0, prompt}};
                for (std::uint32_t n = 1; n <= neighbours; ++n) {
                    std::vector<std::int32_t> other;
                    for (std::uint32_t i = 0; i < 3 + n; ++i)
                        other.push_back(std::int32_t((n * 53 + i * 11) % 300));
                    batch.push_back({n, other});
                }
                for (int step = 0; step < 4; ++step) {
                    const auto result = engine.step(batch);
                    for (std::size_t i = 0; i < batch.size(); ++i)
                        batch[i].tokens = {result.sequences[i].argmax.back()};
                    logits.push_back(result.sequences[0].logits);
                }
                return logits;
            };
            const auto alone = run(0);
            const auto besideOthers = run(12);
            QCOMPARE(besideOthers.size(), alone.size());
            for (std::size_t step = 0; step < alone.size(); ++step)
                QVERIFY2(besideOthers[step] == alone[step], ("step " + std::to_string(step) + ", " +
                                                             std::string(weightFormatName(format)))
                                                                .c_str());
            // The switch is the serving loop's: off again, the engine fuses attention again.
            engine.setBatchInvariant(false);
            QVERIFY(!engine.tuning().batchInvariant);
        }
    }

    void sweepIsExactAndComplete() {
        Engine engine(*model_, options());
        BatchSweepOptions sweep;
        sweep.batches = {4, 1, 2};
        // 40: a shared prefix of 32 (two full blocks), a tail of 8 fed after each fork.
        sweep.context = 40;
        sweep.steps = 3;
        sweep.exactnessSequences = 4;
        sweep.readBytesPerSecond = 1e9;
        const auto result = runBatchSweep(engine, sweep);
        QCOMPARE(result.points.size(), std::size_t(3));
        QCOMPARE(result.points[0].batch, 1u); // sorted
        QCOMPARE(result.points[0].throughputMultiplier, 1.0);
        for (const auto& p : result.points) {
            QVERIFY(p.stepMilliseconds > 0);
            QCOMPARE(p.tokensPerSecond, p.batch * 1e3 / p.stepMilliseconds);
            QVERIFY(p.rooflineWithKvMilliseconds > p.rooflineWeightsMilliseconds);
        }
        QCOMPARE(result.exactness.size(), std::size_t(4));
        for (const auto& c : result.exactness) {
            QCOMPARE(c.batch, 4u);
            QCOMPARE(c.tokens, 1u + 1u + 3u); // prefill token, untimed step, timed steps
            QVERIFY(c.equal());
        }
        QVERIFY(result.capNote.empty());
        QCOMPARE(engine.kvCache().usedBlocks(), 0u);
        // 32: two full blocks, the fork shares the whole cache (prefix 16 + tail 16).
        sweep.context = 32;
        const auto whole = runBatchSweep(engine, sweep);
        QCOMPARE(sweepLayout(engine, 32).prefix, 16u);
        for (const auto& c : whole.exactness) QVERIFY(c.equal());
        QCOMPARE(engine.kvCache().usedBlocks(), 0u);
        const auto tables = batchSweepTables(result);
        QCOMPARE(tables.size(), std::size_t(3));
        QCOMPARE(tables[0].id, std::string("batching-sweep"));
        QCOMPARE(tables[0].rows.size(), std::size_t(3));
    }

    void sweepCapsByCapacity() {
        // 64 positions: 4 blocks of 16, so 40 + 2 + 1 positions (3 blocks) fit one sequence.
        Engine engine(*model_, options(64));
        BatchSweepOptions sweep;
        sweep.batches = {1, 2, 4};
        sweep.context = 40;
        sweep.steps = 2;
        sweep.exactnessSequences = 1;
        const auto result = runBatchSweep(engine, sweep);
        QCOMPARE(result.maxBatch, 1u);
        QCOMPARE(result.points.size(), std::size_t(1));
        QVERIFY(result.capNote.find("B = 2, 4 left out") != std::string::npos);
        sweep.batches = {0, 1};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runBatchSweep(engine, sweep));
        sweep.batches = {1};
        sweep.context = 600; // over the model's 512
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runBatchSweep(engine, sweep));
    }

    void schedulersMatchRequestsAlone() {
        Engine engine(*model_, options());
        RequestMixSpec spec{12, 4, 19, 80, 5};
        const auto lengths = skewedLengths(spec);
        std::vector<ServingRequest> requests;
        std::vector<RequestShape> shapes;
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            std::vector<std::int32_t> prompt;
            for (std::uint32_t k = 0; k < 3 + i % 4; ++k)
                prompt.push_back(std::int32_t((i * 31 + k * 7 + 5) % 300));
            requests.push_back({prompt, lengths[i]});
            shapes.push_back({std::uint32_t(prompt.size()), lengths[i]});
        }
        std::vector<std::vector<std::int32_t>> alone;
        for (const auto& r : requests) alone.push_back(decodeAlone(engine, r));
        QCOMPARE(engine.kvCache().usedBlocks(), 0u);
        for (auto policy : {BatchingPolicy::Static, BatchingPolicy::Continuous}) {
            const auto schedule = buildSchedule(shapes, 4, policy);
            const auto run = runSchedule(engine, schedule, requests);
            QCOMPARE(run.stepSeconds.size(), schedule.steps.size());
            for (std::size_t i = 0; i < requests.size(); ++i) QCOMPARE(run.tokens[i], alone[i]);
            QCOMPARE(run.blocksInUseAfter, 0u);
            QVERIFY(run.peakBlocksInUse > 0);
            QVERIFY(run.peakBlocksInUse <= peakBlocks(schedule, shapes, 16));
        }
    }

    void scheduleThatDoesNotFitIsRefused() {
        Engine engine(*model_, options(64)); // 4 blocks
        const std::vector<ServingRequest> requests{{{1, 2}, 40}, {{3, 4}, 40}, {{5, 6}, 40}};
        std::vector<RequestShape> shapes;
        for (const auto& r : requests) shapes.push_back({2, r.outputTokens});
        const auto schedule = buildSchedule(shapes, 3, BatchingPolicy::Continuous);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runSchedule(engine, schedule, requests));
        // Lengths over the context.
        const std::vector<ServingRequest> tooLong{{{1, 2}, 600}};
        const auto longSchedule = buildSchedule({{2, 600}}, 1, BatchingPolicy::Continuous);
        Engine roomy(*model_, options());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runSchedule(roomy, longSchedule, tooLong));
        QCOMPARE(roomy.kvCache().usedBlocks(), 0u);
    }

    void comparisonTablesCarryBothPolicies() {
        Engine engine(*model_, options());
        RequestMixSpec spec{10, 3, 12, 45, 9};
        std::vector<ServingRequest> requests;
        for (auto l : skewedLengths(spec)) requests.push_back({{7, 8, 9}, l});
        SchedulerOptions o;
        o.slotCount = 3;
        o.verifyRequests = 2;
        o.costSweepSteps = 2;
        o.simulateRequests = 200;
        o.simulateSlots = 16;
        o.mix = spec;
        // The timeline as the runs go: every step published (no throttle), rows only grow,
        // and the last one equals the result's timeline.
        o.onTimelineSeconds = 0;
        std::vector<std::size_t> timelineRows;
        Table lastTimeline;
        o.onTimeline = [&](const Table& timeline) {
            timelineRows.push_back(timeline.rows.size());
            lastTimeline = timeline;
        };
        const auto result = compareSchedulers(engine, requests, o);
        QCOMPARE(result.policies.size(), std::size_t(2));
        QCOMPARE(timelineRows.size(), result.policies[0].schedule.steps.size() +
                                          result.policies[1].schedule.steps.size());
        QVERIFY(std::is_sorted(timelineRows.begin(), timelineRows.end()));
        QVERIFY(timelineRows.front() > 0 && timelineRows.front() <= o.slotCount);
        for (const auto& p : result.policies) {
            QVERIFY(p.measured.totalSeconds > 0);
            QVERIFY(p.simulated.totalSeconds > 0);
            QCOMPARE(p.measured.steps, p.simulated.steps);
            QCOMPARE(p.run.blocksInUseAfter, 0u);
        }
        for (const auto& v : result.verified) QVERIFY(v.staticEqual && v.continuousEqual);
        QVERIFY(result.largeContinuous.totalSeconds > 0);
        QVERIFY(result.largeChunked.totalSeconds > 0);
        QVERIFY(result.chunkedSimulated.totalSeconds > 0);
        // The continuous run's peak and the spread steps that differ from it.
        const auto& continuous = result.policies[1].schedule;
        QCOMPARE(result.blockSnapshots.size(),
                 snapshotSteps(blocksPerStep(continuous, result.shapes, 16), o.blockSnapshots - 1)
                     .size());
        QVERIFY(result.blockSnapshots.front().label.find("(peak blocks)") != std::string::npos);
        const auto tables = schedulerTables(result);
        QCOMPARE(tables.front().id, std::string("scheduler-policies"));
        QCOMPARE(tables.front().rows.size(), std::size_t(5)); // + chunked, simulated only
        QCOMPARE(std::get<std::string>(tables.front().at(4, "figures")),
                 std::string("simulated only"));
        QCOMPARE(findTable(tables, "scheduler-simulation")->rows.size(), std::size_t(3));
        QCOMPARE(findTable(tables, "kv-block-map")->rows.size(), result.blockSnapshots.size());
        QVERIFY(findTable(tables, "prefix-sharing") == nullptr); // not run here
        const auto* timeline = findTable(tables, "scheduler-timeline");
        QCOMPARE(lastTimeline.rows.size(), timeline->rows.size());
        QVERIFY(lastTimeline.rows == timeline->rows);
    }

    // The block map of a continuous run: every snapshot agrees with the schedule and with
    // itself (holders = reference counts, used + free = capacity, last-block fill), and
    // every block is free after the run.
    void blockMapDuringContinuousRun() {
        Engine engine(*model_, options());
        RequestMixSpec spec{12, 4, 19, 80, 5};
        const auto lengths = skewedLengths(spec);
        std::vector<ServingRequest> requests;
        std::vector<RequestShape> shapes;
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            std::vector<std::int32_t> prompt;
            for (std::uint32_t k = 0; k < 3 + i % 14; ++k)
                prompt.push_back(std::int32_t((i * 31 + k * 7 + 5) % 300));
            requests.push_back({prompt, lengths[i]});
            shapes.push_back({std::uint32_t(prompt.size()), lengths[i]});
        }
        const auto& cache = engine.kvCache();
        const auto blockSize = cache.blockSize();
        const auto schedule = buildSchedule(shapes, 4, BatchingPolicy::Continuous);
        const auto perStep = blocksPerStep(schedule, shapes, blockSize);
        const auto steps = snapshotSteps(perStep, 3);
        QVERIFY(steps.size() >= 2);
        QCOMPARE(perStep[steps.front()], peakBlocks(schedule, shapes, blockSize));
        const auto run = runSchedule(engine, schedule, requests, {}, steps);
        QCOMPARE(run.blockSnapshots.size(), steps.size());
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const auto& snap = run.blockSnapshots[k];
            const auto t = steps[k];
            QCOMPARE(snap.step, std::int32_t(t));
            QCOMPARE(snap.capacityBlocks, cache.capacityBlocks());
            QCOMPARE(snap.usedBlocks(), perStep[t]);
            std::vector<std::uint32_t> holders(snap.capacityBlocks, 0);
            std::uint32_t positions = 0, running = 0;
            for (const auto& cell : schedule.steps[t].cells) running += cell.request >= 0;
            QCOMPARE(std::uint32_t(snap.sequences.size()), running);
            for (const auto& q : snap.sequences) {
                const auto r = std::size_t(q.sequence - 1);
                QCOMPARE(q.slot, std::int32_t(schedule.requests[r].slot));
                QCOMPARE(q.length, shapes[r].promptTokens + (t - schedule.requests[r].admitStep));
                QCOMPARE(std::uint32_t(q.blocks.size()), (q.length + blockSize - 1) / blockSize);
                const auto rest = q.length % blockSize;
                QCOMPARE(q.lastBlockFill(blockSize), rest == 0 ? blockSize : rest);
                for (auto b : q.blocks) ++holders.at(b);
                positions += q.length;
            }
            std::uint32_t free = 0;
            for (std::uint32_t b = 0; b < snap.capacityBlocks; ++b) {
                QCOMPARE(holders[b], snap.referenceCounts[b]); // owned twice only if shared
                QVERIFY(holders[b] <= 1);                      // no prefix shared here
                free += snap.referenceCounts[b] == 0;
            }
            QCOMPARE(free, snap.freeBlocks);
            QCOMPARE(snap.freeBlocks + snap.usedBlocks(), snap.capacityBlocks);
            QCOMPARE(snap.usedPositions, positions);
            QCOMPARE(snap.internalFragmentationPercent(),
                     100.0 * (snap.allocatedPositions() - positions) / snap.allocatedPositions());
        }
        QCOMPARE(run.blocksInUseAfter, 0u);
        QCOMPARE(cache.freeBlocks(), cache.capacityBlocks());

        const auto tables = kvBlockMapTables(run.blockSnapshots);
        QCOMPARE(tables.size(), std::size_t(3));
        const auto* cells = findTable(tables, "kv-block-cells");
        QVERIFY(cells);
        QCOMPARE(cells->rows.size(), steps.size() * cache.capacityBlocks());
        const auto* map = findTable(tables, "kv-block-map");
        QCOMPARE(map->number(0, "blocks in use"), double(perStep[steps.front()]));
        QCOMPARE(map->number(0, "reserving max context: token slots"),
                 double(4 * cache.maxPositionsPerSequence()));
    }

    // Prefix sharing: the same greedy tokens with and without forkSequence (and as the
    // request alone), and exactly (N - 1) x the prefix's full blocks saved, in blocks and in
    // prefill tokens.
    void prefixSharingSavesThePrefixBlocks() {
        Engine engine(*model_, options());
        const auto blockSize = engine.kvCache().blockSize();
        std::vector<std::int32_t> prefix;
        for (std::uint32_t k = 0; k < 2 * blockSize + 5; ++k)
            prefix.push_back(std::int32_t((k * 13 + 3) % 300));
        std::vector<std::vector<std::int32_t>> tails;
        const std::uint32_t n = 8, outputs = 6;
        std::uint32_t unsharedPrompt = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            std::vector<std::int32_t> tail;
            for (std::uint32_t k = 0; k < 2 + i % 3; ++k)
                tail.push_back(std::int32_t((i * 41 + k * 17 + 1) % 300));
            unsharedPrompt += std::uint32_t(prefix.size() + tail.size());
            tails.push_back(tail);
        }
        const auto r = comparePrefixSharing(engine, prefix, tails, outputs);
        const std::uint32_t sharedBlocks = std::uint32_t(prefix.size()) / blockSize;
        const std::uint32_t sharedPositions = sharedBlocks * blockSize;
        QVERIFY(sharedBlocks > 0);
        QCOMPARE(r.sharedPositions, sharedPositions);
        QCOMPARE(r.identicalOutputs, n);
        for (std::uint32_t i = 0; i < n; ++i) {
            QCOMPARE(r.shared.outputs[i].size(), std::size_t(outputs));
            QCOMPARE(r.shared.outputs[i], r.unshared.outputs[i]);
        }
        auto whole = prefix;
        whole.insert(whole.end(), tails[0].begin(), tails[0].end());
        QCOMPARE(decodeAlone(engine, {whole, outputs}), r.shared.outputs[0]);
        QCOMPARE(r.unshared.prefillTokens, unsharedPrompt);
        QCOMPARE(r.unshared.prefillTokens - r.shared.prefillTokens, (n - 1) * sharedPositions);
        QCOMPARE(r.unshared.blocksAfterPrefill - r.shared.blocksAfterPrefill,
                 (n - 1) * sharedBlocks);
        QCOMPARE(r.unshared.blocksAtEnd - r.shared.blocksAtEnd, (n - 1) * sharedBlocks);
        QVERIFY(r.shared.prefillSeconds > 0 && r.unshared.prefillSeconds > 0);
        // The snapshot after the shared prefill: the prefix's blocks held by every request.
        const auto& snap = r.sharedSnapshot;
        QCOMPARE(snap.sharedBlocks(), sharedBlocks);
        QCOMPARE(snap.usedBlocks(), r.shared.blocksAfterPrefill);
        QCOMPARE(std::uint32_t(snap.sequences.size()), n);
        std::vector<std::uint32_t> holders(snap.capacityBlocks, 0);
        for (const auto& q : snap.sequences)
            for (auto b : q.blocks) ++holders.at(b);
        for (std::uint32_t b = 0; b < snap.capacityBlocks; ++b) {
            QCOMPARE(holders[b], snap.referenceCounts[b]);
            QVERIFY(holders[b] <= 1 || holders[b] == n);
        }
        QCOMPARE(engine.kvCache().usedBlocks(), 0u);
        const auto table = prefixSharingTable(r);
        QCOMPARE(table.rows.size(), std::size_t(2));
        QCOMPARE(std::get<std::string>(table.at(0, "outputs identical")),
                 std::to_string(n) + " of " + std::to_string(n));

        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 comparePrefixSharing(engine, prefix, {}, outputs));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 comparePrefixSharing(engine, {}, tails, outputs));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 comparePrefixSharing(engine, prefix, tails, 0));
        QCOMPARE(engine.kvCache().usedBlocks(), 0u);
    }
};

QTEST_GUILESS_MAIN(TestServingEngine)
#include "test_serving_engine.moc"
