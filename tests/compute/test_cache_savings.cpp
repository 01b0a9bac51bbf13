// Chapter items 2, 3 and 14 on the engine: multiply-accumulate counts by hand, the engine's
// per-step counter against the formula in a real cached-vs-uncached run on lavapipe, the
// peak memory of both runs, and the budget's KV row against what the engine writes.
#include "compute/engine/Engine.hpp"
#include "compute/experiments/budget/MemoryBudget.hpp"
#include "compute/experiments/caching/CacheSavings.hpp"
#include "compute/experiments/caching/CachingLab.hpp"
#include "compute/session/LabSession.hpp"
#include "models/reference/OperationCounts.hpp"
#include "tests/SyntheticModels.hpp"

#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;
namespace ex = inferscope::compute::experiments;

class TestCacheSavings : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

    static models::SyntheticModelSpec spec() {
        auto s = tests::twoLayerGqaSpec();
        s.hiddenSize = 64;
        s.ffnSize = 96;
        s.vocabSize = 300;
        s.seed = 5;
        return s;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec(), model_);
    }

    void macFormulaByHand() {
        models::ModelConfig c;
        c.layers = 1;
        c.hiddenSize = 4;
        c.heads = 2;
        c.kvHeads = 1;
        c.headDim = 2;
        c.ffnSize = 8;
        c.vocabSize = 10;
        // Q 4x4, K and V 4x2 each, O 4x4, gate/up/down 4x8 each: 16+8+8+16+96 = 144.
        QCOMPARE(models::layerMatrixMacsPerToken(c), std::uint64_t(144));
        QCOMPARE(models::outputHeadMacsPerToken(c), std::uint64_t(40));
        // Prompt 2, two tokens. Cached: prefill (2 rows, attention 1+2 positions) then one
        // row at position 2 (3 positions); each position costs 2 heads x 2 dims x 2 = 8.
        QCOMPARE(models::generationMacs(c, 2, 2, true),
                 (models::MacCount{2 * 144 + 40 + 144 + 40, (3 + 3) * 8}));
        // Uncached: the second step runs positions 0, 1, 2 again.
        QCOMPARE(models::generationMacs(c, 2, 2, false),
                 (models::MacCount{2 * 144 + 40 + 3 * 144 + 40, (3 + 6) * 8}));
        // Growth: uncached attention grows as T^3, cached as T^2 (ratio ~T/3 for large T).
        const auto t = ex::macGrowthTable(c, 1, {64, 128});
        const double r64 = t.number(0, "attention uncached / cached");
        const double r128 = t.number(1, "attention uncached / cached");
        QVERIFY2(r128 / r64 > 1.9 && r128 / r64 < 2.1, qPrintable(QString::number(r128 / r64)));
    }

    void engineCounterAgreesWithFormula() {
        compute::LabSession session;
        compute::LoadOptions load;
        load.choice.kind = compute::BackendChoice::Kind::Vulkan;
        load.choice.weightFormat = "fp16";
        QVERIFY(session.load(model_, load).has_value());
        compute::GenerationRequest request;
        request.promptTokenIds = {5, 17, 42, 99, 3};
        request.maxNewTokens = 6;
        request.collectActivations = false;
        request.recordResidualStream = false;
        const auto run = compute::experiments::CachingLab::run(session, request, {});
        QVERIFY(run->identicalTokens());
        QCOMPARE(run->cachedStepMacs.size(), std::size_t(6)); // prefill + 5 decode steps
        QCOMPARE(run->uncachedStepMacs.size(), std::size_t(6));
        const auto config = session.model().config;
        QVERIFY(ex::macCounterAgrees(config, *run));
        // The sums equal the closed-form totals too.
        models::MacCount cached, uncached;
        for (const auto& m : run->cachedStepMacs) cached += m;
        for (const auto& m : run->uncachedStepMacs) uncached += m;
        QCOMPARE(cached, models::generationMacs(config, 5, 6, true));
        QCOMPARE(uncached, models::generationMacs(config, 5, 6, false));
        const auto table = ex::macCounterTable(config, *run);
        QCOMPARE(table.rows.size(), std::size_t(6));

        // Peak memory: the uncached run's last step holds all 10 positions at once, in rows;
        // both runs end with the same KV blocks.
        QVERIFY(run->cachedPeak && run->uncachedPeak);
        QCOMPARE(run->cachedPeak->activationRows, 5u);
        QCOMPARE(run->uncachedPeak->activationRows, 10u);
        QCOMPARE(run->cachedPeak->kvBytes, run->uncachedPeak->kvBytes);
        QVERIFY(run->cachedPeak->kvBytes >= 10 * config.kvBytesPerToken(2));
        QVERIFY(run->uncachedPeak->inUseWithoutWeights() > run->cachedPeak->inUseWithoutWeights());
        const auto peak = ex::peakMemoryTable(config, *run);
        QCOMPARE(peak.rows.size(), std::size_t(3));
        QVERIFY(peak.number(2, "score buffers") > 0); // the eager formula row
    }

    void budgetRowMatchesWhatTheEngineWrites() {
        const auto model = models::loadModel(model_);
        compute::EngineOptions options;
        options.weightFormat = compute::WeightFormat::F16;
        options.kvCapacityTokens = 256;
        options.device.validation = true;
        compute::Engine engine(model, options);
        const auto shape = ex::shapeOf(model.config, model.weights.totalElements(), "synthetic");
        const std::uint64_t perToken = ex::kvBytesPerToken(shape, 2.0);
        QCOMPARE(perToken, engine.kvCache().kvBytesPerToken());
        // A device just big enough for the engine's weights and 100 tokens of context.
        const auto weights = engine.memory().weightBytes;
        const auto solution =
            ex::solveBudget(weights + 100 * perToken + 17, weights, perToken, 0, 50);
        QCOMPARE(solution.contextTokens, std::int64_t(100));
        QCOMPARE(solution.users, std::int64_t(2));
        std::vector<std::int32_t> prompt(100);
        for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = std::int32_t(i * 7 % 300);
        engine.step({{1, prompt}});
        const auto memory = engine.memory();
        QCOMPARE(memory.kvUsedBytes, std::uint64_t(100) * perToken);
        // Paged: whole blocks are handed out, at most one partly filled block more.
        const auto block = engine.options().blockSize;
        QVERIFY(memory.kvAllocatedBytes >= memory.kvUsedBytes);
        QVERIFY(memory.kvAllocatedBytes < memory.kvUsedBytes + block * perToken);
        QCOMPARE(engine.context().validationLog().errors(), 0u);
    }
};

QTEST_GUILESS_MAIN(TestCacheSavings)
#include "test_cache_savings.moc"
