// Chapter item 12 (speculative decoding) on a synthetic model: the formula against the
// chapter's figures, the KV rollback (truncate frees whole blocks, keeps the accounting exact
// and the cache correct), greedy output identical to the target alone for several prompts
// and draft lengths (Vulkan engines and the CPU reference), the sampling rule keeping the
// target's distribution (chi-square), and the session's study.
#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/engine/VulkanBackend.hpp"
#include "compute/experiments/quantization/QualityReport.hpp"
#include "compute/experiments/softlabels/SoftLabels.hpp"
#include "compute/experiments/speculative/SpeculativeDecoding.hpp"
#include "compute/experiments/speculative/SpeculativeLab.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <deque>
#include <map>
#include <set>

using namespace inferscope;
using namespace inferscope::compute;
namespace ex = inferscope::compute::experiments;

namespace {

std::vector<std::int32_t> promptOf(std::uint32_t length, std::uint32_t salt) {
    std::vector<std::int32_t> ids;
    for (std::uint32_t i = 0; i < length; ++i)
        ids.push_back(std::int32_t((i * 37 + salt * 11) % 250));
    return ids;
}

std::unique_ptr<VulkanBackend> engineBackend(const models::LoadedModel& model,
                                             WeightFormat format) {
    EngineOptions options;
    options.weightFormat = format;
    options.kvCapacityTokens = 256;
    options.maxSequences = 4;
    return std::make_unique<VulkanBackend>(std::make_shared<Engine>(model, options));
}

// Forwards to a real backend and notes the shape of each append (tokens, all logits or the
// last). Appends before the first of a prompt's length are the study's warm-up; the shapes
// of the smaller appends after it (the timed steps and verifications) are collected apart.
using StepShape = std::pair<std::size_t, bool>;
struct ShapeLog {
    std::string backend;
    std::set<StepShape> warmed, steps;
};

class ShapeRecorder : public DecoderBackend {
public:
    ShapeRecorder(std::unique_ptr<DecoderBackend> inner, std::size_t promptLength, ShapeLog& log)
        : inner_(std::move(inner)), promptLength_(promptLength), log_(log) {
        log_.backend = inner_->name();
    }
    std::string name() const override { return inner_->name(); }
    void reset() override { inner_->reset(); }
    std::vector<float> append(std::span<const std::int32_t> tokens) override {
        note({tokens.size(), false});
        return inner_->append(tokens);
    }
    std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) override {
        note({tokens.size(), true});
        return inner_->appendAllLogits(tokens);
    }
    std::uint32_t vocabSize() const override { return inner_->vocabSize(); }
    std::uint32_t length() const override { return inner_->length(); }
    void truncate(std::uint32_t newLength) override { inner_->truncate(newLength); }

private:
    void note(StepShape shape) {
        if (shape.first + 1 >= promptLength_)
            warm_ = false; // the prompt (or all of it but its last token)
        else
            (warm_ ? log_.warmed : log_.steps).insert(shape);
    }
    std::unique_ptr<DecoderBackend> inner_;
    std::size_t promptLength_;
    ShapeLog& log_;
    bool warm_ = true;
};

// Wilson-Hilferty: the chi-square quantile for `dof` degrees of freedom at the normal
// quantile z (z = 3.09: p = 0.001).
double chiSquareQuantile(double dof, double z) {
    const double a = 2.0 / (9.0 * dof);
    return dof * std::pow(1 - a + z * std::sqrt(a), 3);
}

// Pearson's statistic of the observed counts against n draws from p, over bins where the
// expectation is at least 5 and one bin for the rest; returns {statistic, degrees of freedom}.
std::pair<double, double> chiSquare(const std::map<std::int32_t, int>& counts,
                                    const std::vector<double>& p, int n) {
    double statistic = 0, restExpected = 0, restObserved = 0;
    int bins = 0;
    for (std::size_t t = 0; t < p.size(); ++t) {
        const double expected = n * p[t];
        const auto found = counts.find(std::int32_t(t));
        const double observed = found == counts.end() ? 0 : found->second;
        if (expected < 5) {
            restExpected += expected;
            restObserved += observed;
            continue;
        }
        statistic += (observed - expected) * (observed - expected) / expected;
        ++bins;
    }
    if (restExpected > 0) {
        statistic += (restObserved - restExpected) * (restObserved - restExpected) / restExpected;
        ++bins;
    }
    return {statistic, double(bins - 1)};
}

} // namespace

class TestSpeculative : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<models::LoadedModel> model_, other_;
    std::string modelPath_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.seed = 11;
        modelPath_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, modelPath_);
        model_ = std::make_unique<models::LoadedModel>(models::loadModel(modelPath_));
        // A model of the same shape and vocabulary with other, untied weights: a draft that
        // disagrees often (random models with tied embeddings all tend to repeat their input,
        // so a quantized copy of the target agrees almost everywhere).
        models::SyntheticModelSpec other = spec;
        other.seed = 12;
        other.tiedEmbeddings = false;
        const auto otherPath = dir_.filePath("other.gguf").toStdString();
        models::writeSyntheticGguf(other, otherPath);
        other_ = std::make_unique<models::LoadedModel>(models::loadModel(otherPath));
    }

    void formulaMatchesTheChapter() {
        // The chapter: at 90% acceptance g = 8 is worth 3.40x, at 30% 0.79x (draft cost 0.1).
        QVERIFY(std::fabs(ex::speculativeSpeedup(0.9, 8, 0.1) - 3.40) < 0.005);
        QVERIFY(std::fabs(ex::speculativeSpeedup(0.3, 8, 0.1) - 0.79) < 0.005);
        QCOMPARE(ex::expectedTokensPerVerification(1.0, 4), 5.0);
        QCOMPARE(ex::expectedTokensPerVerification(0.0, 4), 1.0);
        // The sum 1 + a + ... + a^g, which the closed form must equal.
        double sum = 0;
        for (int k = 0; k <= 5; ++k) sum += std::pow(0.6, k);
        QVERIFY(std::fabs(ex::expectedTokensPerVerification(0.6, 5) - sum) < 1e-12);
        QCOMPARE(ex::medianOf({3, 1, 2}), 2.0);
        QCOMPARE(ex::medianOf({4, 1, 2, 3}), 2.5);
    }

    // Issue 48 item 1: the device's prediction divides by g c + v(g), v(g) the measured
    // verification step in target steps; between the runs' g it follows the line through them.
    void devicePredictionUsesTheMeasuredVerifyCost() {
        QCOMPARE(ex::speculativeSpeedupOnDevice(0.9, 8, 0.1, 1.0),
                 ex::speculativeSpeedup(0.9, 8, 0.1));
        // alpha 0.75, g 2: 2.3125 tokens per verification, over 2 x 0.5 + 1.5.
        QVERIFY(std::fabs(ex::speculativeSpeedupOnDevice(0.75, 2, 0.5, 1.5) - 0.925) < 1e-12);
        ex::SpeculativeStudy study;
        QCOMPARE(study.verifyCostAt(3), 0.0); // no runs
        study.targetStepSeconds = 0.010;
        study.targetAlone.stepSeconds.assign(8, 0.010);
        study.targetAlone.generateSeconds = 0.080;
        for (auto [g, verifySeconds] : {std::pair{2u, 0.0632}, std::pair{4u, 0.0944}}) {
            ex::SpeculativeRunSummary r;
            r.run.draftLength = g;
            r.run.verifications = 4;
            r.run.verifySeconds = verifySeconds; // v(2) = 1.58, v(4) = 2.36
            r.run.reachedAt.assign(g, 4);
            r.run.acceptedAt.assign(g, 3);
            r.run.tokens.assign(8, 1);
            r.run.generateSeconds = 0.100;
            study.runs.push_back(r);
        }
        QVERIFY(std::fabs(study.verifyCost(study.runs[0].run) - 1.58) < 1e-9);
        QVERIFY(std::fabs(study.verifyCostAt(2) - 1.58) < 1e-9);
        QVERIFY(std::fabs(study.verifyCostAt(3) - 1.97) < 1e-9); // halfway
        QVERIFY(std::fabs(study.verifyCostAt(8) - 3.92) < 1e-9); // along the line beyond
        QVERIFY(std::fabs(study.verifyCostAt(1) - 1.58) < 1e-9); // the shortest run's
        // Two noisy runs whose line falls: beyond them v(g) holds, it never drops to 0.
        auto falling = study;
        falling.runs[1].run.verifySeconds = 0.050; // v(4) = 1.25 < v(2)
        QVERIFY(std::fabs(falling.verifyCostAt(8) - 1.25) < 1e-9);
        ex::DraftAgreement draft;
        draft.scheme = "int8-row";
        draft.agrees = {true, true, true, false}; // alpha 0.75
        draft.stepSeconds = {0.005};              // c 0.5
        study.drafts.push_back(draft);
        study.runDraft = "int8-row";
        const auto tables = ex::speculativeTables(study);
        const auto* formula = findTable(tables, "speculative-formula");
        QVERIFY(formula);
        QVERIFY(std::fabs(formula->number(1, "verify cost v(g)") - 1.58) < 1e-9);
        QVERIFY(std::fabs(formula->number(1, "predicted on this device") -
                          ex::speculativeSpeedupOnDevice(0.75, 2, 0.5, 1.58)) < 1e-9);
        // The note says in numbers why the two predictions part.
        const std::string& why = formula->notes.back();
        QVERIFY2(why.find("g = 2: 1.58") != std::string::npos &&
                     why.find("g = 4: 2.36") != std::string::npos &&
                     why.find("about one step") != std::string::npos,
                 why.c_str());
        QCOMPARE(why, ex::speculativeVerifyNote(study));
    }

    void truncateFreesWholeBlocksAndKeepsTheCacheRight() {
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        options.blockSize = 16;
        options.kvCapacityTokens = 128;
        Engine engine(*model_, options);
        const auto prompt = promptOf(40, 1);
        engine.step({{1, prompt}});
        const auto& cache = engine.kvCache();
        QCOMPARE(cache.usedBlocks(), 3u);
        engine.truncate(1, 17);
        QCOMPARE(engine.sequenceLength(1), 17u);
        QCOMPARE(cache.usedBlocks(), 2u);
        QCOMPARE(cache.freeBlocks(), cache.capacityBlocks() - 2);
        QCOMPARE(cache.usedBytes(), 17 * cache.kvBytesPerToken());
        // Continuing after the cut gives what a fresh sequence of the same tokens gives.
        const std::vector<std::int32_t> rest = {5, 9, 200};
        const auto continued = engine.step({{1, rest}}).sequences[0].logits;
        std::vector<std::int32_t> whole(prompt.begin(), prompt.begin() + 17);
        whole.insert(whole.end(), rest.begin(), rest.end());
        const auto fresh = engine.step({{2, whole}}).sequences[0].logits;
        QCOMPARE(continued.size(), fresh.size());
        float worst = 0;
        for (std::size_t i = 0; i < fresh.size(); ++i)
            worst = std::max(worst, std::fabs(continued[i] - fresh[i]));
        QVERIFY2(worst < 1e-3f, qPrintable(QString("max |diff| %1").arg(worst)));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, engine.truncate(1, 100));
        // A block another sequence shares is never cut into.
        engine.release(2);
        engine.step({{3, promptOf(20, 2)}});
        QCOMPARE(engine.forkSequence(3, 4), 16u);
        engine.step({{4, {7, 8}}});
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.truncate(4, 8));
        engine.truncate(4, 16); // whole shared blocks stay
        QCOMPARE(engine.sequenceLength(4), 16u);
    }

    void greedyOutputIsTheTargetsOnVulkan() {
        auto target = engineBackend(*model_, WeightFormat::F16);
        std::uint32_t accepted = 0, rejected = 0;
        for (const auto* draftModel : {model_.get(), other_.get()}) {
            auto draft =
                engineBackend(*draftModel, draftModel == model_.get() ? WeightFormat::Int4Tensor
                                                                      : WeightFormat::F16);
            for (std::uint32_t salt : {1u, 2u, 3u}) {
                const auto prompt = promptOf(5 + salt * 3, salt);
                ex::SpeculativeOptions options;
                options.maxNewTokens = 24;
                const auto alone = ex::runAlone(*target, prompt, options);
                for (std::uint32_t g : {1u, 3u, 6u}) {
                    options.draftLength = g;
                    const auto run = ex::runSpeculative(*target, *draft, prompt, options);
                    QCOMPARE(run.tokens, alone.tokens);
                    QVERIFY(run.verifications >= 24 / (g + 1));
                    accepted += run.accepted;
                    rejected += run.proposed - run.accepted;
                    // The rollback left exactly the committed sequence (all but the last
                    // token, which no model has seen yet) and the blocks it needs.
                    const auto length = target->length();
                    QCOMPARE(std::size_t(length), prompt.size() + run.tokens.size() - 1);
                    const auto& cache = target->engine().kvCache();
                    QCOMPARE(cache.usedBlocks(),
                             (length + cache.blockSize() - 1) / cache.blockSize());
                }
            }
        }
        // Both paths ran: kept proposals and rolled-back ones.
        QVERIFY(accepted > 0);
        QVERIFY(rejected > 0);
    }

    void greedyOutputIsTheTargetsOnTheCpuReference() {
        const auto config = model_->config;
        auto reference = std::make_shared<const models::ReferenceTransformer>(
            config, models::dequantizeAll(model_->weights), 1);
        auto drafted = std::make_shared<const models::ReferenceTransformer>(
            config,
            ex::quantizedReferenceWeights(model_->weights, models::parseQuantScheme("int4-row")),
            1);
        CpuBackend target(reference), draft(drafted);
        for (std::uint32_t g : {2u, 5u}) {
            const auto prompt = promptOf(6, g);
            ex::SpeculativeOptions options;
            options.maxNewTokens = 20;
            options.draftLength = g;
            const auto alone = ex::runAlone(target, prompt, options);
            const auto run = ex::runSpeculative(target, draft, prompt, options);
            QCOMPARE(run.tokens, alone.tokens);
            // A stop token ends both at the same place.
            options.stopTokens = {alone.tokens[7]};
            const auto stopped = ex::runSpeculative(target, draft, prompt, options);
            QVERIFY(stopped.tokens.size() <= 8);
            QCOMPARE(stopped.tokens.back(), alone.tokens[7]);
        }
        ex::SpeculativeOptions bad;
        bad.draftLength = 0;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 ex::runSpeculative(target, draft, promptOf(3, 1), bad));
    }

    void samplingKeepsTheTargetsDistribution() {
        // The first generated token over many seeded runs against the target's softmax at T.
        // Bound: Pearson's chi-square below its 0.999 quantile (Wilson-Hilferty), so a correct
        // rule fails about once in a thousand seeds-sets; the draft's own distribution must
        // fail the same bound, or the test could not tell the two apart.
        const auto config = model_->config;
        auto reference = std::make_shared<const models::ReferenceTransformer>(
            config, models::dequantizeAll(model_->weights), 1);
        // The draft: the other model, so proposals are often rejected and the resampling
        // path carries much of the mass.
        auto drafted = std::make_shared<const models::ReferenceTransformer>(
            other_->config, models::dequantizeAll(other_->weights), 1);
        CpuBackend target(reference), draft(drafted);
        const auto prompt = promptOf(4, 9);
        const double temperature = 1.5;
        const auto p = ex::softmaxAtTemperature(target.append(prompt), temperature);
        draft.reset();
        const auto q = ex::softmaxAtTemperature(draft.append(prompt), temperature);
        const double kl = ex::klDivergenceNats(p, q);
        QVERIFY2(kl > 0.1, qPrintable(QString("KL(p || q) = %1").arg(kl))); // really differs

        const int runs = 3000;
        std::map<std::int32_t, int> speculative, fromDraft;
        std::mt19937_64 random(12345);
        std::uint32_t rejections = 0;
        for (int i = 0; i < runs; ++i) {
            ex::SpeculativeOptions options;
            options.maxNewTokens = 1;
            options.draftLength = 2;
            options.temperature = temperature;
            options.seed = std::uint64_t(i) + 1;
            const auto run = ex::runSpeculative(target, draft, prompt, options);
            ++speculative[run.tokens.at(0)];
            rejections += run.proposed - run.accepted;
            ++fromDraft[ex::drawToken(q, random)];
        }
        QVERIFY(rejections > 0);
        const auto [statistic, dof] = chiSquare(speculative, p, runs);
        qInfo("T %g: KL(p || q) %.3f, chi-square %.1f, %g degrees of freedom, %u rejections",
              temperature, kl, statistic, dof, rejections);
        const double bound = chiSquareQuantile(dof, 3.09);
        QVERIFY2(dof >= 5, qPrintable(QString("only %1 degrees of freedom").arg(dof)));
        QVERIFY2(
            statistic < bound,
            qPrintable(QString("chi-square %1 >= %2 (dof %3)").arg(statistic).arg(bound).arg(dof)));
        const auto [draftStatistic, draftDof] = chiSquare(fromDraft, p, runs);
        QVERIFY2(draftStatistic > chiSquareQuantile(draftDof, 3.09),
                 qPrintable(QString("the draft alone passes: %1").arg(draftStatistic)));
    }

    // No timed step builds a pipeline: the study feeds every backend, untimed, each shape its
    // timed steps will have (the target's one-token steps and g + 1 verifications; a draft's
    // one- and two-token steps), before the prompt it is measured on.
    void studyWarmsEveryTimedShape() {
        const auto prompt = promptOf(20, 4);
        std::deque<ShapeLog> logs; // one per backend built, outliving it
        const auto factory = [&](const std::string& name) {
            auto recorder =
                std::make_unique<ShapeRecorder>(engineBackend(*model_, *weightFormatFromName(name)),
                                                prompt.size(), logs.emplace_back());
            ex::FormatBackend result;
            result.backend = recorder.get();
            result.owned = std::move(recorder);
            return result;
        };
        ex::SpeculativeStudyOptions options;
        options.draftFormats = {"int8-row", "int4-tensor"};
        options.runDraft = "int4-tensor"; // rebuilt for the runs: a draft's two-token steps
        options.positions = 16;
        options.runDraftLengths = {1, 3, 6};
        options.runTokens = 24;
        const auto study = ex::runSpeculativeStudy(factory, factory, prompt, options);
        QCOMPARE(study.runs.size(), std::size_t(3));
        QCOMPARE(logs.size(), std::size_t(4)); // target, two drafts, the run draft
        for (StepShape shape : {StepShape{2, true}, StepShape{4, true}, StepShape{7, true}})
            QVERIFY(logs.front().steps.count(shape));
        QVERIFY(logs.back().steps.count({2, false}));
        for (const auto& log : logs) {
            QVERIFY(!log.warmed.empty());
            for (const auto& [tokens, allLogits] : log.steps)
                QVERIFY2(log.warmed.count({tokens, allLogits}),
                         qPrintable(QString("%1: a timed append of %2 tokens (%3) was not warmed")
                                        .arg(QString::fromStdString(log.backend))
                                        .arg(tokens)
                                        .arg(allLogits ? "all logits" : "last logits")));
        }
    }

    void sessionStudyMeasuresEveryDraft() {
        LabSession session;
        LoadOptions load;
        load.choice.kind = BackendChoice::Kind::Vulkan;
        QVERIFY(session.load(modelPath_, load).has_value());
        ex::SpeculativeRequest request;
        request.prompt = "hello world";
        request.chat = false;
        request.study.draftFormats = {"int8-row", "int4-tensor"};
        request.study.positions = 16;
        request.study.runDraftLengths = {2, 4};
        request.study.runTokens = 12;
        auto* engine = gpuEngineOf(session);
        QVERIFY(engine);
        const auto label = engine->weightFormatLabel();
        const auto weightBytes = engine->memory().weightBytes;
        const auto kvReserved = engine->memory().kvReservedBytes;
        const auto kvCapacity = engine->kvCache().capacityBlocks();
        // What the session's engine holds while the drafts are measured.
        std::uint64_t kvWhileLent = 0;
        JobControl watch;
        watch.progress = [&](const std::string& stage, int) {
            if (stage.rfind("Draft", 0) == 0 && !kvWhileLent)
                kvWhileLent = engine->memory().kvReservedBytes;
        };
        const auto study = ex::SpeculativeLab::run(session, request, watch);
        // The target was the session's engine re-packed into fp16, with a KV cache sized for
        // the study in place of the session's, and the engine came back whole after.
        QVERIFY2(study->target.find("fp16") != std::string::npos, study->target.c_str());
        QVERIFY(kvWhileLent > 0);
        QVERIFY2(
            kvWhileLent < kvReserved / 4,
            qPrintable(QString("the lent engine held %1 bytes of KV cache; the session's is %2")
                           .arg(kvWhileLent)
                           .arg(kvReserved)));
        QCOMPARE(engine->weightFormatLabel(), label);
        QCOMPARE(engine->memory().weightBytes, weightBytes);
        QCOMPARE(engine->memory().kvReservedBytes, kvReserved);
        QCOMPARE(engine->kvCache().capacityBlocks(), kvCapacity);
        QCOMPARE(study->drafts.size(), std::size_t(2));
        for (const auto& d : study->drafts) {
            QCOMPARE(d.agrees.size(), std::size_t(16));
            QVERIFY(d.weightBytes > 0);
            QVERIFY(study->draftCost(d) > 0);
        }
        // int8 per row is closer to the target than int4 per tensor.
        QVERIFY(study->drafts[0].alpha() >= study->drafts[1].alpha());
        QCOMPARE(study->runs.size(), std::size_t(2));
        for (const auto& r : study->runs) {
            QVERIFY(r.identicalToTarget);
            QCOMPARE(r.run.tokens.size(), std::size_t(12));
        }
        const auto tables = ex::speculativeTables(*study);
        QCOMPARE(tables.size(), std::size_t(4));
        QCOMPARE(tables[1].id, std::string("speculative-formula"));
        QCOMPARE(tables[1].rows.size(), std::size_t(8));
        QCOMPARE(tables[2].at(0, "same tokens as the target alone"), Cell(std::string("yes")));

        // Cancelled while a draft is measured: the session gets its engine back all the same.
        std::atomic<bool> cancel{false};
        JobControl control;
        control.cancel = &cancel;
        control.progress = [&](const std::string& stage, int) {
            if (stage.rfind("Draft", 0) == 0) cancel = true;
        };
        QVERIFY_THROWS_EXCEPTION(JobCancelled, ex::SpeculativeLab::run(session, request, control));
        QCOMPARE(engine->weightFormatLabel(), label);
        QCOMPARE(engine->memory().weightBytes, weightBytes);
        QCOMPARE(engine->memory().kvReservedBytes, kvReserved);

        auto bad = request;
        bad.study.draftFormats = {"int3-magic"};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::SpeculativeLab::run(session, bad, {}));
        bad = request;
        bad.study.runDraftLengths = {0};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::SpeculativeLab::run(session, bad, {}));
        bad = request;
        bad.study.runDraftLengths = {10000};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::SpeculativeLab::run(session, bad, {}));
    }
};

QTEST_GUILESS_MAIN(TestSpeculative)
#include "test_speculative.moc"
