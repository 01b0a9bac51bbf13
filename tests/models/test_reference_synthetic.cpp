// One synthetic model written two ways, GGUF (llama: Q/K rows permuted for adjacent RoPE
// pairs; qwen2: split-half pairs, q/k/v biases) and safetensors (HF order, split-half pairs),
// loaded by loadModel and run by the reference transformer: the logits must agree. This is
// what proves the RoPE pairing logic, because the two files store Q/K differently and only
// the right pairing for each makes them the same model. And the reference computing from the
// stored tensors (f32, f16, bf16, q8_0, q4_0, q4_1) gives the bits of its fp32-copy path.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
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
    void storedWeightsGiveTheCopysBits_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("safetensors");
        QTest::addColumn<bool>("tied");
        QTest::newRow("llama f32") << "llama" << int(TensorType::F32) << false << true;
        QTest::newRow("llama f16") << "llama" << int(TensorType::F16) << false << true;
        QTest::newRow("llama bf16") << "llama" << int(TensorType::BF16) << false << false;
        QTest::newRow("llama q8_0") << "llama" << int(TensorType::Q8_0) << false << true;
        QTest::newRow("llama q4_1") << "llama" << int(TensorType::Q4_1) << false << false;
        QTest::newRow("qwen2 q4_0") << "qwen2" << int(TensorType::Q4_0) << false << true;
        QTest::newRow("qwen2 q8_0") << "qwen2" << int(TensorType::Q8_0) << false << false;
        QTest::newRow("safetensors f16") << "llama" << int(TensorType::F16) << true << true;
        QTest::newRow("safetensors bf16") << "qwen2" << int(TensorType::BF16) << true << false;
    }

    // The stored-weights path dequantizes each row as the products reach it; the fp32 copy
    // holds WeightStore::dequantized of the same tensors. A row dequantizes to the same values
    // either way (blocks never straddle rows) and the products sum in the same order, so the
    // logits must be identical bits: a 40-token prefill (two position tiles of the products),
    // then cached decode steps.
    void storedWeightsGiveTheCopysBits() {
        QFETCH(QString, architecture);
        QFETCH(int, type);
        QFETCH(bool, safetensors);
        QFETCH(bool, tied);
        SyntheticModelSpec spec = specFor(architecture.toStdString());
        spec.weightType = TensorType(type);
        spec.tiedEmbeddings = tied;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path path =
            safetensors ? dir.filePath("hf").toStdString() : dir.filePath("m.gguf").toStdString();
        if (safetensors)
            writeSyntheticSafetensors(spec, path);
        else
            writeSyntheticGguf(spec, path);
        const LoadedModel model = loadModel(path);
        // The matrices really are stored in the type under test.
        QCOMPARE(int(model.weights.at("blk.0.attn_q.weight").type), type);
        QCOMPARE(int(model.weights.at("blk.1.ffn_down.weight").type), type);
        QCOMPARE(model.weights.contains("output.weight"), !tied);

        const ReferenceTransformer copy(model.config, dequantizeAll(model.weights), 2);
        const ReferenceTransformer stored(model.config, model.weights, 2);
        std::vector<std::int32_t> tokens(40);
        for (std::size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = std::int32_t((i * 37 + 11) % model.config.vocabSize);
        auto copyCache = copy.newCache();
        auto storedCache = stored.newCache();
        const auto expected = copy.forward(tokens, copyCache, true);
        const auto logits = stored.forward(tokens, storedCache, true);
        QCOMPARE(logits.size(), std::size_t(40) * spec.vocabSize);
        QVERIFY(maxAbs(logits) > 0);
        QVERIFY(logits == expected);
        for (std::int32_t token : {5, 77, 123}) {
            const std::int32_t next[1] = {token};
            QVERIFY(stored.forward(next, storedCache) == copy.forward(next, copyCache));
        }
        QVERIFY(stored.forwardUncached(tokens) == copy.forwardUncached(tokens));
    }

    // A stored tensor of the wrong shape is refused as the fp32 copy's is.
    void storedWeightsAreChecked() {
        SyntheticModelSpec spec = specFor("llama");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path path = dir.filePath("m.gguf").toStdString();
        writeSyntheticGguf(spec, path);
        const LoadedModel model = loadModel(path);
        ModelConfig wider = model.config;
        wider.ffnSize += 32;
        QVERIFY_THROWS_EXCEPTION(ModelError, ReferenceTransformer(wider, model.weights, 1));
        WeightStore missing;
        for (const auto& [name, tensor] : model.weights.tensors())
            if (name != "blk.1.ffn_up.weight") missing.add(tensor);
        QVERIFY_THROWS_EXCEPTION(ModelError, ReferenceTransformer(model.config, missing, 1));
    }

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
