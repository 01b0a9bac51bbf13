// Chapter item 13 (soft labels): softmax at temperature T, the T-th-root rule for ratios, the
// entropy and KL helpers, and the session's next-token distribution with per-scheme KL on a
// synthetic model (the scheme that changes nothing has KL exactly 0); on a Vulkan session the
// schemes run in their GPU formats on the session's engine, which gets its own weights back.
#include "compute/engine/Engine.hpp"
#include "compute/experiments/quantization/SchemeBackends.hpp"
#include "compute/experiments/softlabels/SoftLabels.hpp"
#include "compute/experiments/softlabels/SoftLabelsLab.hpp"
#include "compute/session/LabSession.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace inferscope;
namespace ex = inferscope::compute::experiments;

class TestSoftLabels : public QObject {
    Q_OBJECT
private slots:
    void temperatureTakesTheRootOfRatios() {
        const std::vector<float> logits = {2.0f, 1.5f, 1.2f, -1.0f, 0.3f};
        const auto one = ex::softmaxAtTemperature(logits, 1.0);
        const auto two = ex::softmaxAtTemperature(logits, 2.0);
        double sum = 0;
        for (double p : two) sum += p;
        QVERIFY(std::fabs(sum - 1.0) < 1e-12);
        const double r1 = one[0] / one[2], r2 = two[0] / two[2];
        QVERIFY(std::fabs(r2 - std::sqrt(r1)) < 1e-12);
        QVERIFY(std::fabs(r1 - std::exp(double(logits[0]) - double(logits[2]))) <
                1e-9); // exp(l1 - l3)
        // Higher T: flatter, more entropy; the order never changes.
        QVERIFY(ex::entropyNats(two) > ex::entropyNats(one));
        QCOMPARE(ex::topTokens(logits, 3), (std::vector<std::int32_t>{0, 1, 2}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::softmaxAtTemperature(logits, 0.0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::softmaxAtTemperature(logits, -1.0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::softmaxAtTemperature(logits, NAN));
    }

    void entropyAndKlByHand() {
        const std::vector<double> uniform(4, 0.25), skewed = {0.7, 0.1, 0.1, 0.1};
        QVERIFY(std::fabs(ex::entropyNats(uniform) - std::log(4.0)) < 1e-12);
        QCOMPARE(ex::klDivergenceNats(uniform, uniform), 0.0);
        const double expected = 0.25 * (std::log(0.25 / 0.7) + 3 * std::log(0.25 / 0.1));
        QVERIFY(std::fabs(ex::klDivergenceNats(uniform, skewed) - expected) < 1e-12);
        QVERIFY(std::isinf(ex::klDivergenceNats(uniform, std::vector<double>{1.0, 0.0, 0.0, 0.0})));
    }

    void summaryTableShowsTheRule() {
        ex::NextTokenDistribution d;
        d.prompt = "x";
        d.logits = {3.0f, 2.2f, 1.9f, 0.5f};
        d.topIds = ex::topTokens(d.logits, 4);
        d.topPieces = {"a", "b", "c", "d"};
        const auto t = ex::softLabelSummaryTable(d, {1.0, 2.0, 0.5});
        for (std::size_t r = 0; r < 3; ++r)
            QVERIFY(std::fabs(t.number(r, "top-1 / top-3") -
                              t.number(r, "ratio at T = 1, to the power 1/T")) < 1e-9);
        const auto labels = ex::softLabelTable(d, {1.0, 2.0}, 3);
        QCOMPARE(labels.rows.size(), std::size_t(3));
        QVERIFY(labels.number(0, "T = 2") < labels.number(0, "T = 1"));
    }

    void sessionMeasuresSchemes() {
        QTemporaryDir dir;
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        const std::string model = dir.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model);
        compute::LabSession session(compute::cpuBackendFactory());
        QVERIFY(session.load(model, {}).has_value());
        compute::experiments::SoftLabelRequest request;
        request.prompt = "hello world";
        request.schemes = {models::parseQuantScheme("fp32"),
                           models::parseQuantScheme("int4-tensor")};
        const auto d = compute::experiments::SoftLabelsLab::run(session, request, {});
        QCOMPARE(d->logits.size(), std::size_t(spec.vocabSize));
        QCOMPARE(d->schemes.size(), std::size_t(2));
        QCOMPARE(d->schemes[0].klNats, 0.0); // fp32 changes nothing: the same logits
        QCOMPARE(d->schemes[0].topToken, d->topIds.front());
        QVERIFY(d->schemes[1].klNats > 0);
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            compute::experiments::SoftLabelsLab::run(
                session, compute::experiments::SoftLabelRequest{"", false, {}}, {}));
    }

    void vulkanSessionRunsSchemesInTheirGpuFormats() {
        QTemporaryDir dir;
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        const std::string model = dir.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model);
        compute::LabSession session;
        compute::LoadOptions load;
        load.choice.kind = compute::BackendChoice::Kind::Vulkan;
        QVERIFY(session.load(model, load).has_value());
        auto* engine = compute::gpuEngineOf(session);
        QVERIFY(engine);
        const auto label = engine->weightFormatLabel();
        const auto weightBytes = engine->memory().weightBytes;
        const std::vector<std::int32_t> ids = {1, 5, 9, 2, 7};
        const auto& weights = session.model().weights;
        auto reference = ex::referenceSchemeBackends(session.model().config, weights, 1);
        {
            auto backends = ex::sessionSchemeBackends(session);
            const auto stored = backends->use(models::parseQuantScheme("as-stored")).append(ids);
            // fp32 keeps every stored value: the same engine, the same logits.
            QCOMPARE(backends->use(models::parseQuantScheme("fp32")).append(ids), stored);
            for (const char* name : {"int8-row", "int4-g128", "nf4-b64", "int4-g32"}) {
                const auto scheme = models::parseQuantScheme(name);
                const auto logits = backends->use(scheme).append(ids);
                const auto format = ex::gpuFormatOfScheme(scheme);
                if (format) {
                    // Packed straight into the format: the projections in it, the head as
                    // stored, no fp32 copy of the weights.
                    for (const auto& matrix : engine->weightMatrices())
                        if (matrix.name.rfind("blk.", 0) == 0) QCOMPARE(matrix.format, *format);
                    QVERIFY(engine->options().headFormat == compute::WeightFormat::AsStored);
                }
                const auto expected = reference->use(scheme).append(ids);
                QCOMPARE(logits.size(), expected.size());
                float largest = 0, difference = 0;
                for (std::size_t i = 0; i < logits.size(); ++i) {
                    largest = std::max(largest, std::fabs(expected[i]));
                    difference = std::max(difference, std::fabs(logits[i] - expected[i]));
                }
                // The kernels' sums in another order than the reference's: within 1e-3 of
                // the largest logit (the engine's f32-accumulation tolerance).
                QVERIFY2(difference <= 1e-3f * largest + 1e-5f,
                         (std::string(name) + ": " + std::to_string(difference)).c_str());
            }
            QVERIFY(backends->description().find("int4-g32") != std::string::npos);
            backends->finish();
        }
        // The session's engine as it was.
        QCOMPARE(engine->weightFormatLabel(), label);
        QCOMPARE(engine->memory().weightBytes, weightBytes);
        QVERIFY(!engine->options().headFormat);
        // Cancelled half-way: given back all the same.
        {
            auto backends = ex::sessionSchemeBackends(session);
            backends->use(models::parseQuantScheme("int4-row"));
        }
        QCOMPARE(engine->weightFormatLabel(), label);
        QCOMPARE(engine->memory().weightBytes, weightBytes);
    }
};

QTEST_GUILESS_MAIN(TestSoftLabels)
#include "test_soft_labels.moc"
