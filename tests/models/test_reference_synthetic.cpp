// One synthetic model written two ways, GGUF (llama: Q/K rows permuted for adjacent RoPE
// pairs; qwen2: split-half pairs, q/k/v biases) and safetensors (HF order, split-half pairs),
// loaded by loadModel and run by the reference transformer: the logits must agree. This is
// what proves the RoPE pairing logic, because the two files store Q/K differently and only
// the right pairing for each makes them the same model.
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace inferscope::models;

namespace {

SyntheticModelSpec specFor(const std::string& architecture) {
    SyntheticModelSpec spec;
    spec.architecture = architecture;
    spec.layers = 2;
    spec.hiddenSize = 64;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.headDim = 16;
    spec.ffnSize = 96;
    spec.vocabSize = 300;
    spec.qkvBias = architecture == "qwen2";
    spec.seed = 17;
    spec.outlierDims = {5, 40};
    return spec;
}

// All-position logits of a 20-token sequence.
std::vector<float> logitsOf(const LoadedModel& model, RopePairing pairing) {
    ModelConfig config = model.config;
    config.ropePairing = pairing;
    const ReferenceTransformer transformer(config, dequantizeAll(model.weights), 2);
    std::vector<std::int32_t> tokens(20);
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = std::int32_t((i * 37 + 11) % config.vocabSize);
    auto cache = transformer.newCache();
    return transformer.forward(tokens, cache, true);
}

double maxAbs(const std::vector<float>& v) {
    double m = 0.0;
    for (float x : v) m = std::max(m, double(std::fabs(x)));
    return m;
}

double maxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

} // namespace

class TestReferenceSynthetic : public QObject {
    Q_OBJECT

private slots:
    void ggufAndSafetensorsAgree_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<int>("ggufPairing");
        QTest::newRow("llama") << "llama" << int(RopePairing::Adjacent);
        QTest::newRow("qwen2") << "qwen2" << int(RopePairing::SplitHalf);
    }

    // Tolerance 1e-4 relative to the largest logit: the weights are the same f32 numbers,
    // only the order of the Q/K rows (hence of the terms in q.k) differs between the files,
    // which moves logits by float rounding (~1e-6). A wrong pairing moves them by ~1e-1.
    void ggufAndSafetensorsAgree() {
        QFETCH(QString, architecture);
        QFETCH(int, ggufPairing);
        const SyntheticModelSpec spec = specFor(architecture.toStdString());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path gguf = dir.filePath("model.gguf").toStdString();
        const std::filesystem::path folder = dir.filePath("hf").toStdString();
        writeSyntheticGguf(spec, gguf);
        writeSyntheticSafetensors(spec, folder);
        const LoadedModel fromGguf = loadModel(gguf);
        const LoadedModel fromSafetensors = loadModel(folder);

        QCOMPARE(int(fromGguf.config.ropePairing), ggufPairing);
        QCOMPARE(int(fromSafetensors.config.ropePairing), int(RopePairing::SplitHalf));
        QCOMPARE(fromGguf.config.qkvBias, spec.qkvBias);
        QCOMPARE(fromSafetensors.config.qkvBias, spec.qkvBias);

        const auto ggufLogits = logitsOf(fromGguf, fromGguf.config.ropePairing);
        const auto safetensorsLogits =
            logitsOf(fromSafetensors, fromSafetensors.config.ropePairing);
        QCOMPARE(ggufLogits.size(), std::size_t(20) * spec.vocabSize);
        QCOMPARE(safetensorsLogits.size(), ggufLogits.size());
        const double scale = std::max(1.0, maxAbs(ggufLogits));
        const double difference = maxAbsDifference(ggufLogits, safetensorsLogits);
        qInfo("%s: largest logit difference %.2e (largest logit %.2f)", qPrintable(architecture),
              difference, scale);
        QVERIFY2(difference <= 1e-4 * scale, qPrintable(QString::number(difference)));

        // The check has teeth: running either file with the other pairing changes the logits
        // of the later positions (position 0 is the identity rotation and hides the bug).
        if (fromGguf.config.ropePairing == RopePairing::Adjacent) {
            const auto wrong = logitsOf(fromGguf, RopePairing::SplitHalf);
            const std::vector<float> firstRowRight(ggufLogits.begin(),
                                                   ggufLogits.begin() + spec.vocabSize);
            const std::vector<float> firstRowWrong(wrong.begin(), wrong.begin() + spec.vocabSize);
            QVERIFY(maxAbsDifference(firstRowRight, firstRowWrong) <= 1e-4 * scale);
            QVERIFY(maxAbsDifference(ggufLogits, wrong) > 1e-2 * scale);
        }
        const auto wrongSafetensors = logitsOf(fromSafetensors, RopePairing::Adjacent);
        QVERIFY(maxAbsDifference(safetensorsLogits, wrongSafetensors) > 1e-2 * scale);
    }
};

QTEST_APPLESS_MAIN(TestReferenceSynthetic)
#include "test_reference_synthetic.moc"
