// The Vulkan engine on qwen3, gemma3, phi3 and smollm3 (the tiny fixtures, from GGUF and from
// the HF folder): the prompt's logits and cached decode steps agree with the CPU reference
// (LogitComparison's tolerance, same top-1), uncached steps too; gemma3's windowed layers
// keep only their window in the KV cache (their allocated bytes stop growing while the global
// layers' grow) and its window pool gives blocks back; the llama family records none of the
// new dispatches.
#include "compute/engine/Engine.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticShapes.hpp"
#include "tests/ArchitectureLogits.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::compute;
using inferscope::tests::compareLogits;

namespace {

const std::vector<std::int32_t> kPrompt{12, 250, 7, 99, 140, 3, 61, 200, 45, 18, 77, 260};

std::string writeFixture(const QTemporaryDir& dir, const QString& architecture, bool folder,
                         models::TensorType type = models::TensorType::F32) {
    const auto spec = *models::syntheticShape("tiny-" + architecture.toStdString(), type);
    const std::string path =
        dir.filePath("tiny-" + architecture + (folder ? "-hf" : ".gguf")).toStdString();
    if (folder)
        models::writeSyntheticSafetensors(spec, path);
    else
        models::writeSyntheticGguf(spec, path);
    return path;
}

std::vector<float> referenceLogits(const models::LoadedModel& model,
                                   std::span<const std::int32_t> tokens) {
    const models::ReferenceTransformer reference(model.config, model.weights, 2);
    auto cache = reference.newCache();
    return reference.forward(tokens, cache, true);
}

} // namespace

class ArchitectureEngineTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void promptAndDecodeMatchTheReference_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<bool>("folder");
        for (const char* name : {"qwen3", "gemma3", "phi3", "smollm3"}) {
            QTest::newRow((std::string(name) + " gguf").c_str()) << QString(name) << false;
            QTest::newRow((std::string(name) + " hf").c_str()) << QString(name) << true;
        }
    }
    void promptAndDecodeMatchTheReference() {
        QFETCH(QString, architecture);
        QFETCH(bool, folder);
        const auto model = models::loadModel(writeFixture(dir_, architecture, folder));
        const std::uint32_t vocab = model.config.vocabSize;
        const auto expected = referenceLogits(model, kPrompt);

        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        options.kvCapacityTokens = 64;
        options.blockSize = 4; // tiny-gemma3's window is 4: blocks go back to the pool
        Engine engine(model, options);
        // The prompt in two chunks (7, then 5 tokens), then one token at a time is the same.
        const std::vector<std::int32_t> first(kPrompt.begin(), kPrompt.begin() + 7);
        const std::vector<std::int32_t> second(kPrompt.begin() + 7, kPrompt.end());
        const auto a = engine.step({{1, first}}, true).sequences[0].logits;
        const auto b = engine.step({{1, second}}, true).sequences[0].logits;
        std::vector<float> gpu(a);
        gpu.insert(gpu.end(), b.begin(), b.end());
        QVERIFY(compareLogits(gpu, expected, vocab, "prompt") <= 1.0);
        // And against llama.cpp on the same weights (tests/data/architecture-logits.json).
        const double llamaCpp =
            tests::compareWithLlamaCpp("tiny-" + architecture.toStdString(), gpu, vocab, 2e-3);
        qInfo("against llama.cpp: largest error %.3f of the allowed", llamaCpp);
        QVERIFY(llamaCpp <= 1.0);

        std::vector<float> decoded;
        for (std::int32_t token : kPrompt) {
            const auto out = engine.step({{2, {token}}}).sequences[0].logits;
            decoded.insert(decoded.end(), out.begin(), out.end());
        }
        QVERIFY(compareLogits(decoded, expected, vocab, "decode") <= 1.0);

        engine.setCached(false);
        const auto uncached = engine.step({{3, kPrompt}}).sequences[0].logits;
        QVERIFY(compareLogits(uncached,
                              std::span<const float>(expected).subspan(expected.size() - vocab),
                              vocab, "uncached") <= 1.0);
    }

    // Quantized weights as stored (q8_0): the engine against the reference on the same codes.
    void quantizedAsStored() {
        const auto model =
            models::loadModel(writeFixture(dir_, "gemma3", false, models::TensorType::Q8_0));
        const auto expected = referenceLogits(model, kPrompt);
        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        options.kvCapacityTokens = 64;
        Engine engine(model, options);
        const auto gpu = engine.step({{1, kPrompt}}, true).sequences[0].logits;
        QVERIFY(compareLogits(gpu, expected, model.config.vocabSize, "q8_0") <= 1.0);
    }

    void windowedLayersKeepOnlyTheirWindow() {
        const auto model = models::loadModel(writeFixture(dir_, "gemma3", false));
        const auto& c = model.config;
        QCOMPARE(c.slidingWindow, 4u);
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        options.kvCapacityTokens = 64;
        options.blockSize = 2;
        options.maxSequences = 2;
        options.maxTokensPerStep = 4;
        Engine engine(model, options);
        const auto& kv = engine.kvCache();
        QVERIFY(kv.hasWindow());
        // The window pool: per sequence (window - 1 + 4 tokens) / 2 blocks + 1, two sequences.
        QCOMPARE(kv.windowCapacityBlocks(), 10u);
        QVERIFY(kv.windowCapacityBlocks() < kv.capacityBlocks());
        const auto reserved = kv.reservedBytesByLayer();
        QVERIFY(reserved[0] < reserved[1]); // layer 0 windowed, layer 1 global

        std::vector<std::uint64_t> windowed, global;
        for (std::size_t i = 0; i < 20; ++i) {
            const auto result = engine.step({{1, {kPrompt[i % kPrompt.size()]}}});
            windowed.push_back(result.probes.kvAllocatedBytesByLayer[0]);
            global.push_back(result.probes.kvAllocatedBytesByLayer[1]);
        }
        const std::uint64_t perPosition = c.kvBytesPerTokenPerLayer();
        QCOMPARE(global.back(), 20 * perPosition);
        // The window (4) plus the block being filled, in blocks of 2: at most 3 blocks.
        QVERIFY2(windowed.back() <= 6 * perPosition, qPrintable(QString::number(windowed.back())));
        QCOMPARE(windowed[3], 4 * perPosition);  // still growing below the window
        QCOMPARE(windowed.back(), windowed[15]); // flat past it
        // Rolling back within what the windowed layers hold works, past it is refused.
        engine.truncate(1, 19);
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.truncate(1, 4));
    }

    void llamaRecordsNoNewDispatches() {
        models::SyntheticModelSpec spec;
        const std::string path = dir_.filePath("llama.gguf").toStdString();
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        EngineOptions options;
        options.kvCapacityTokens = 64;
        Engine engine(model, options);
        options.probes.kernelTimings = true;
        engine.setProbes(options.probes);
        const auto result = engine.step({{1, {1, 2, 3}}});
        for (const auto& kernel : result.probes.kernels)
            QVERIFY2(kernel.kernel != "qk_norm_rope" && kernel.kernel != "attn_post_norm" &&
                         kernel.kernel != "ffn_post_norm",
                     kernel.kernel.c_str());
        QVERIFY(!engine.kvCache().hasWindow());
    }
};

QTEST_GUILESS_MAIN(ArchitectureEngineTest)
#include "test_architecture_engine.moc"
