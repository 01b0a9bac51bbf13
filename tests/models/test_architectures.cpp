// qwen3, gemma3, phi3 and smollm3: each tiny fixture written as GGUF (llama.cpp's conventions:
// gemma3 norms stored as 1 + w, phi3's Q|K|V and gate|up fused, smollm3's Q/K rows permuted)
// and as an HF folder (transformers': norms as w, split-half rows, fused phi3 matrices), loaded
// and run by the reference transformer: the two must compute the same logits, which holds only
// when each loader reads its file's conventions right. Then what each architecture adds is
// shown to matter (a trait switched off changes the logits), the sliding window to act only
// past the window, the KV formula to split global and windowed layers, and unsupported
// architectures to be refused by name.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/GgufWriter.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/reference/OperationCounts.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticShapes.hpp"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>

using namespace inferscope::models;

namespace {

const std::vector<std::int32_t>& fixtureTokens() {
    // Longer than tiny-gemma3's window of 4, so windowed layers drop positions.
    static const std::vector<std::int32_t> tokens{12, 250, 7, 99, 140, 3, 61, 200, 45, 18, 77, 260};
    return tokens;
}

std::vector<float> allLogits(const ModelConfig& config, const WeightStore& weights) {
    const ReferenceTransformer transformer(config, weights, 2);
    auto cache = transformer.newCache();
    return transformer.forward(fixtureTokens(), cache, true);
}

double maxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

double maxAbs(const std::vector<float>& v) {
    double m = 0.0;
    for (float x : v) m = std::max(m, double(std::fabs(x)));
    return m;
}

SyntheticModelSpec tinySpec(const QString& architecture) {
    return *syntheticShape("tiny-" + architecture.toStdString(), TensorType::F32);
}

void expectRefused(const std::function<void()>& load, const QString& mentions) {
    try {
        load();
    } catch (const ModelError& error) {
        QVERIFY2(QString(error.what()).contains(mentions), error.what());
        return;
    }
    QFAIL(qPrintable("accepted a model that should be refused for " + mentions));
}

} // namespace

class TestArchitectures : public QObject {
    Q_OBJECT

private slots:
    void ggufAndSafetensorsAgree_data() {
        QTest::addColumn<QString>("architecture");
        for (const char* name : {"qwen3", "gemma3", "phi3", "smollm3"}) QTest::newRow(name) << name;
    }
    void ggufAndSafetensorsAgree() {
        QFETCH(QString, architecture);
        QTemporaryDir dir;
        const SyntheticModelSpec spec = tinySpec(architecture);
        writeSyntheticGguf(spec, dir.filePath("model.gguf").toStdString());
        writeSyntheticSafetensors(spec, dir.filePath("hf").toStdString());
        const LoadedModel gguf = loadModel(dir.filePath("model.gguf").toStdString());
        const LoadedModel hf = loadModel(dir.filePath("hf").toStdString());
        const ModelConfig& g = gguf.config;
        const ModelConfig& h = hf.config;
        QCOMPARE(QString::fromStdString(g.architecture), architecture);
        QCOMPARE(QString::fromStdString(h.architecture), architecture);
        QCOMPARE(g.qkNorm, h.qkNorm);
        QCOMPARE(g.postNorms, h.postNorms);
        QCOMPARE(g.activation, h.activation);
        QCOMPARE(g.embeddingScale, h.embeddingScale);
        QCOMPARE(g.attentionScaleValue(), h.attentionScaleValue());
        QCOMPARE(g.layerSpans, h.layerSpans);
        QCOMPARE(g.slidingWindow, h.slidingWindow);
        QCOMPARE(g.noRopeLayers, h.noRopeLayers);
        QCOMPARE(g.tiedEmbeddings, h.tiedEmbeddings);
        // The loaders' conventions: gemma's HF norms are w (the model multiplies by 1 + w),
        // the GGUF's already 1 + w; smollm3's GGUF rotates adjacent pairs.
        QCOMPARE(g.normWeightOffset, 0.0f);
        QCOMPARE(h.normWeightOffset, architecture == "gemma3" ? 1.0f : 0.0f);
        QCOMPARE(g.ropePairing,
                 architecture == "smollm3" ? RopePairing::Adjacent : RopePairing::SplitHalf);
        QCOMPARE(h.ropePairing, RopePairing::SplitHalf);

        const auto fromGguf = allLogits(g, gguf.weights);
        const auto fromHf = allLogits(h, hf.weights);
        QCOMPARE(fromGguf.size(), fixtureTokens().size() * spec.vocabSize);
        QVERIFY(maxAbs(fromGguf) > 0.5);
        const double difference = maxAbsDifference(fromGguf, fromHf);
        QVERIFY2(difference < 1e-4, qPrintable(QString("max |GGUF - HF| = %1").arg(difference)));
    }

    // Each trait switched off gives another model: the loaders' flags are not decoration.
    void everyTraitChangesTheLogits_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<QString>("trait");
        QTest::newRow("qwen3 q/k norm") << "qwen3"
                                        << "qkNorm";
        QTest::newRow("gemma3 q/k norm") << "gemma3"
                                         << "qkNorm";
        QTest::newRow("gemma3 post-norms") << "gemma3"
                                           << "postNorms";
        QTest::newRow("gemma3 gelu") << "gemma3"
                                     << "activation";
        QTest::newRow("gemma3 embedding scale") << "gemma3"
                                                << "embeddingScale";
        QTest::newRow("gemma3 window") << "gemma3"
                                       << "window";
        QTest::newRow("gemma3 window base") << "gemma3"
                                            << "ropeThetaWindow";
        QTest::newRow("smollm3 nope") << "smollm3"
                                      << "noRope";
    }
    void everyTraitChangesTheLogits() {
        QFETCH(QString, architecture);
        QFETCH(QString, trait);
        QTemporaryDir dir;
        writeSyntheticGguf(tinySpec(architecture), dir.filePath("m.gguf").toStdString());
        const LoadedModel model = loadModel(dir.filePath("m.gguf").toStdString());
        ModelConfig changed = model.config;
        if (trait == "qkNorm") changed.qkNorm = false;
        if (trait == "postNorms") changed.postNorms = false;
        if (trait == "activation") changed.activation = FfnActivation::Silu;
        if (trait == "embeddingScale") changed.embeddingScale = 1.0f;
        if (trait == "window") changed.slidingWindow = 1000; // longer than the sequence
        if (trait == "ropeThetaWindow") changed.ropeThetaWindow = changed.ropeTheta;
        if (trait == "noRope") changed.noRopeLayers.clear();
        const double difference = maxAbsDifference(allLogits(model.config, model.weights),
                                                   allLogits(changed, model.weights));
        QVERIFY2(difference > 1e-3, qPrintable(QString("%1 off: %2").arg(trait).arg(difference)));
    }

    // A windowed layer sees the last `window` positions: positions before the window fills
    // are the same with or without it, later ones differ; cached steps match the prompt.
    void slidingWindowActsOnlyPastTheWindow() {
        QTemporaryDir dir;
        const SyntheticModelSpec spec = tinySpec("gemma3");
        writeSyntheticGguf(spec, dir.filePath("m.gguf").toStdString());
        const LoadedModel model = loadModel(dir.filePath("m.gguf").toStdString());
        QCOMPARE(model.config.windowedLayers(), 2u);
        QVERIFY(model.config.windowed(0) && !model.config.windowed(1));
        ModelConfig global = model.config; // the same RoPE bases, a window past the sequence
        global.slidingWindow = 1000;
        const auto windowed = allLogits(model.config, model.weights);
        const auto full = allLogits(global, model.weights);
        const std::size_t vocab = spec.vocabSize;
        for (std::size_t t = 0; t < fixtureTokens().size(); ++t) {
            const std::vector<float> a(windowed.begin() + t * vocab,
                                       windowed.begin() + (t + 1) * vocab);
            const std::vector<float> b(full.begin() + t * vocab, full.begin() + (t + 1) * vocab);
            if (t < spec.slidingWindow)
                QCOMPARE(maxAbsDifference(a, b), 0.0);
            else
                QVERIFY2(maxAbsDifference(a, b) > 1e-4, qPrintable(QString("position %1").arg(t)));
        }
        // One token at a time through the cache gives the prompt's last row.
        const ReferenceTransformer transformer(model.config, model.weights, 2);
        auto cache = transformer.newCache();
        std::vector<float> last;
        for (std::int32_t token : fixtureTokens()) last = transformer.forward({&token, 1}, cache);
        const std::vector<float> promptLast(windowed.end() - std::ptrdiff_t(vocab), windowed.end());
        QVERIFY(maxAbsDifference(last, promptLast) < 1e-5);
    }

    void ropeTablesPerLayer() {
        QTemporaryDir dir;
        writeSyntheticGguf(tinySpec("smollm3"), dir.filePath("s.gguf").toStdString());
        const ModelConfig smol = loadModel(dir.filePath("s.gguf").toStdString()).config;
        QCOMPARE(smol.noRopeLayers, (std::vector<std::uint32_t>{3}));
        for (float f : layerRopeInverseFrequencies(smol, 3)) QCOMPARE(f, 0.0f);
        QCOMPARE(layerRopeInverseFrequencies(smol, 0)[1], ropeInverseFrequencies(smol)[1]);

        writeSyntheticGguf(tinySpec("gemma3"), dir.filePath("g.gguf").toStdString());
        const ModelConfig gemma = loadModel(dir.filePath("g.gguf").toStdString()).config;
        QCOMPARE(gemma.ropeThetaWindow, 10000.0f);
        QCOMPARE(gemma.ropeTheta, 1000000.0f);
        // Pair 1 of a head of 32: theta^(-2/32).
        QCOMPARE(layerRopeInverseFrequencies(gemma, 0)[1], float(std::pow(10000.0, -2.0 / 32)));
        QCOMPARE(layerRopeInverseFrequencies(gemma, 1)[1], float(std::pow(1e6, -2.0 / 32)));
    }

    // KV bytes: windowed layers stop growing at the window (the split the KV panel shows).
    void kvBytesSplitGlobalAndWindowed() {
        const ModelConfig gemma =
            syntheticConfig(gemma3TwoHundredSeventyMillionShape(TensorType::Q8_0));
        QCOMPARE(gemma.windowedLayers(), 15u); // 18 layers, every sixth global
        QCOMPARE(gemma.globalLayers(), 3u);
        const std::uint64_t perLayer = 2ull * 1 * 256 * 2; // K and V, 1 kv head, 256, f16
        QCOMPARE(gemma.kvBytesPerTokenPerLayer(), perLayer);
        QCOMPARE(gemma.kvCacheBytes(100), 18 * 100 * perLayer);
        QCOMPARE(gemma.kvCacheBytes(4096), (3 * 4096 + 15 * 512) * perLayer);
        const ModelConfig qwen = syntheticConfig(qwen3SixHundredMillionShape(TensorType::Q8_0));
        QCOMPARE(qwen.kvCacheBytes(4096), 4096 * qwen.kvBytesPerToken());
        QCOMPARE(qwen.kvBytesPerToken(), 2ull * 28 * 8 * 128 * 2); // 114,688 bytes
    }

    // Windowed layers score at most the window: the MAC formula and its closed form agree.
    void attentionMacsFollowTheWindow() {
        const ModelConfig gemma =
            syntheticConfig(gemma3TwoHundredSeventyMillionShape(TensorType::Q8_0));
        const std::uint64_t perKey = 4ull * 256 * 2; // heads x head dim x 2
        QCOMPARE(attentionMacsAtPosition(gemma, 99), 100 * 18 * perKey);
        QCOMPARE(attentionMacsAtPosition(gemma, 999), (1000 * 3 + 512 * 15) * perKey);
        std::uint64_t sum = 0;
        for (std::uint64_t p = 500; p < 530; ++p) sum += attentionMacsAtPosition(gemma, p);
        QCOMPARE(forwardMacs(gemma, 500, 30, 0).attention, sum);
    }

    void phi3FusedTensorsAreSplitIntoViews() {
        QTemporaryDir dir;
        const SyntheticModelSpec spec = tinySpec("phi3");
        writeSyntheticGguf(spec, dir.filePath("p.gguf").toStdString());
        const LoadedModel model = loadModel(dir.filePath("p.gguf").toStdString());
        for (const char* gone : {"blk.0.attn_qkv.weight", "blk.0.ffn_gate_up.weight"})
            QVERIFY(!model.weights.contains(gone));
        const StoredTensor& q = model.weights.at("blk.0.attn_q.weight");
        const StoredTensor& k = model.weights.at("blk.0.attn_k.weight");
        const StoredTensor& gate = model.weights.at("blk.0.ffn_gate.weight");
        const StoredTensor& up = model.weights.at("blk.0.ffn_up.weight");
        QCOMPARE(q.shape, (std::vector<std::uint64_t>{64, 64}));
        QCOMPARE(gate.shape, (std::vector<std::uint64_t>{64, 96}));
        // Views of one fused block of rows: K follows Q, up follows gate, nothing copied.
        QCOMPARE(static_cast<const void*>(k.data.data()),
                 static_cast<const void*>(q.data.data() + q.data.size()));
        QCOMPARE(static_cast<const void*>(up.data.data()),
                 static_cast<const void*>(gate.data.data() + gate.data.size()));
        QVERIFY(!model.config.tiedEmbeddings);
    }

    void unsupportedArchitecturesAreRefusedByName() {
        QTemporaryDir dir;
        GgufWriter writer;
        writer.set("general.architecture", std::string("gemma2"));
        const std::string path = dir.filePath("gemma2.gguf").toStdString();
        writer.write(path);
        expectRefused([&] { loadModel(path); }, "unsupported architecture 'gemma2'");

        nlohmann::json config = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                                 {"model_type", "gemma3"}};
        expectRefused([&] { parseHfConfig(config, "config.json"); }, "multimodal");
        config = {{"architectures", {"Gemma2ForCausalLM"}}};
        expectRefused([&] { parseHfConfig(config, "config.json"); }, "Gemma2ForCausalLM");

        // A gemma3 with logit soft-capping (a Gemma 2 trait) is refused, naming the key.
        writeSyntheticSafetensors(tinySpec("gemma3"), dir.filePath("g").toStdString());
        auto json =
            nlohmann::json::parse(std::ifstream(dir.filePath("g/config.json").toStdString()));
        json["final_logit_softcapping"] = 30.0;
        expectRefused([&] { parseHfConfig(json, "config.json"); }, "final_logit_softcapping");
        json["final_logit_softcapping"] = nullptr;
        json["hidden_activation"] = "relu";
        expectRefused([&] { parseHfConfig(json, "config.json"); }, "hidden_activation");
    }

    // Phi-3.5's LongRope: the short factors divide the frequencies, the attention factor
    // scales the scores by its square, the context is capped at the original one.
    void phi3LongRopeFromConfigJson() {
        nlohmann::json config = {{"architectures", {"Phi3ForCausalLM"}},
                                 {"model_type", "phi3"},
                                 {"hidden_size", 64u},
                                 {"intermediate_size", 96u},
                                 {"num_hidden_layers", 2u},
                                 {"num_attention_heads", 4u},
                                 {"num_key_value_heads", 4u},
                                 {"vocab_size", 300u},
                                 {"max_position_embeddings", 131072u},
                                 {"original_max_position_embeddings", 4096u},
                                 {"rope_theta", 10000.0},
                                 {"hidden_act", "silu"},
                                 {"sliding_window", 262144u}};
        std::vector<double> shortFactors(8, 1.5), longFactors(8, 4.0);
        config["rope_scaling"] = {
            {"type", "longrope"}, {"short_factor", shortFactors}, {"long_factor", longFactors}};
        const ModelConfig c = parseHfConfig(config, "config.json");
        QCOMPARE(c.ropeScaling.type, RopeScalingType::LongRope);
        QCOMPARE(c.contextLength, 4096u);
        const double factor = std::sqrt(1.0 + std::log(32.0) / std::log(4096.0));
        QVERIFY(std::fabs(c.ropeScaling.attentionFactor - factor) < 1e-6);
        QVERIFY(std::fabs(c.attentionScaleValue() - factor * factor / 4.0) < 1e-6);
        const auto table = ropeInverseFrequencies(c);
        QVERIFY(std::fabs(table[1] - std::pow(10000.0, -2.0 / 16) / 1.5) < 1e-7);
    }
};

QTEST_GUILESS_MAIN(TestArchitectures)
#include "test_architectures.moc"
