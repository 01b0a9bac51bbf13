// ModelConfig: the KV-cache formula against the chapter's numbers, and validate() refusing
// inconsistent or absurd hyper-parameters with the offending field named.
#include "models/ModelConfig.hpp"
#include "models/ModelError.hpp"

#include <QtTest>

#include <limits>

using namespace inferscope::models;

namespace {

ModelConfig smolLm() {
    ModelConfig config;
    config.architecture = "llama";
    config.layers = 30;
    config.hiddenSize = 576;
    config.heads = 9;
    config.kvHeads = 3;
    config.headDim = 64;
    config.ffnSize = 1536;
    config.vocabSize = 49152;
    config.contextLength = 8192;
    config.ropeTheta = 100000.0f;
    config.rmsNormEps = 1e-5f;
    return config;
}

void expectInvalid(const ModelConfig& config, const char* field) {
    try {
        config.validate("config.json");
    } catch (const ModelError& error) {
        QCOMPARE(error.field(), std::string(field));
        QVERIFY2(QString(error.what()).contains(field), error.what());
        QVERIFY2(QString(error.what()).contains("config.json"), error.what());
        return;
    }
    QFAIL(qPrintable(QString("accepted a config with a bad %1").arg(field)));
}

} // namespace

class TestModelConfig : public QObject {
    Q_OBJECT

private slots:
    void kvBytesPerTokenMatchesTheChapter() {
        // 2 (K and V) x 24 layers x 2 KV heads x 64 dims x 2 bytes (fp16) = 12,288 bytes.
        ModelConfig config;
        config.layers = 24;
        config.kvHeads = 2;
        config.headDim = 64;
        QCOMPARE(config.kvBytesPerToken(2), 12288ull);
        QCOMPARE(config.kvBytesPerToken(1), 6144ull);
        QCOMPARE(config.kvBytesPerToken(4), 24576ull);
        QCOMPARE(smolLm().kvBytesPerToken(), 23040ull); // 2 x 30 x 3 x 64 x 2
    }

    void mhaVersusGqa() {
        ModelConfig mha;
        mha.layers = 24;
        mha.heads = 14;
        mha.kvHeads = 14;
        mha.headDim = 64;
        ModelConfig gqa = mha;
        gqa.kvHeads = 2;
        QCOMPARE(mha.kvBytesPerToken() / gqa.kvBytesPerToken(), 7ull);
        QCOMPARE(mha.kvBytesPerToken() % gqa.kvBytesPerToken(), 0ull);
        QCOMPARE(gqa.queryGroupSize(), 7u);
        QCOMPARE(mha.queryGroupSize(), 1u);
        ModelConfig none;
        QCOMPARE(none.queryGroupSize(), 0u); // no division by zero on an empty config
    }

    void supportedArchitectureList() {
        const auto& names = supportedArchitectures();
        QCOMPARE(names, (std::vector<std::string>{"llama", "mistral", "qwen2", "qwen3", "gemma3",
                                                  "phi3", "smollm3"}));
    }

    void validConfigsPass() {
        smolLm().validate("smol");
        ModelConfig qwen = smolLm();
        qwen.architecture = "qwen2";
        qwen.heads = 14;
        qwen.kvHeads = 2;
        qwen.hiddenSize = 896;
        qwen.ropeScaling.type = RopeScalingType::Linear;
        qwen.ropeScaling.factor = 4.0f;
        qwen.validate("qwen");
        ModelConfig llama3 = smolLm();
        llama3.ropeScaling.type = RopeScalingType::Llama3;
        llama3.ropeScaling.factor = 8.0f;
        llama3.validate("llama3");
    }

    void invalidConfigsAreRefused() {
        ModelConfig c = smolLm();
        c.architecture = "gpt2";
        expectInvalid(c, "architecture");
        c = smolLm();
        c.layers = 0;
        expectInvalid(c, "layers");
        c = smolLm();
        c.layers = 1u << 20;
        expectInvalid(c, "layers");
        c = smolLm();
        c.hiddenSize = 0;
        expectInvalid(c, "hiddenSize");
        c = smolLm();
        c.heads = 0;
        expectInvalid(c, "heads");
        c = smolLm();
        c.kvHeads = 0;
        expectInvalid(c, "kvHeads");
        c = smolLm();
        c.kvHeads = 4; // 9 % 4 != 0
        expectInvalid(c, "kvHeads");
        c = smolLm();
        c.kvHeads = 18; // more KV heads than query heads
        expectInvalid(c, "kvHeads");
        c = smolLm();
        c.headDim = 63;
        expectInvalid(c, "headDim");
        c = smolLm();
        c.headDim = 1024; // 9 x 1024 attention width for a 576 hidden size
        expectInvalid(c, "headDim");
        c = smolLm();
        c.ffnSize = 0;
        expectInvalid(c, "ffnSize");
        c = smolLm();
        c.vocabSize = 0;
        expectInvalid(c, "vocabSize");
        c = smolLm();
        c.vocabSize = std::numeric_limits<std::uint32_t>::max();
        expectInvalid(c, "vocabSize");
        c = smolLm();
        c.contextLength = 0;
        expectInvalid(c, "contextLength");
        c = smolLm();
        c.rmsNormEps = 0.0f;
        expectInvalid(c, "rmsNormEps");
        c = smolLm();
        c.rmsNormEps = std::numeric_limits<float>::quiet_NaN();
        expectInvalid(c, "rmsNormEps");
        c = smolLm();
        c.ropeTheta = std::numeric_limits<float>::infinity();
        expectInvalid(c, "ropeTheta");
        c = smolLm();
        c.ropeTheta = -1.0f;
        expectInvalid(c, "ropeTheta");
        c = smolLm();
        c.ropeScaling.type = RopeScalingType::Linear;
        c.ropeScaling.factor = 0.0f;
        expectInvalid(c, "ropeScaling.factor");
        c = smolLm();
        c.ropeScaling.type = RopeScalingType::Llama3;
        c.ropeScaling.highFreqFactor = 0.5f; // below the low-frequency factor
        expectInvalid(c, "ropeScaling.highFreqFactor");
    }
};

QTEST_APPLESS_MAIN(TestModelConfig)
#include "test_model_config.moc"
