// The chapter's model in shape (Qwen2.5-0.5B: 151,936 embedding rows, tied, Q/K/V biases)
// with random weights, written by the synthetic-model writer, in Q8_0 and in llama.cpp's
// Q4_K_M mix as people download it (rows of 896 in Q5_0, ffn_down in Q4_K / Q6_K, attn_v and
// the tied head in Q8_0 where the layer gets more bits): the Vulkan engine runs each as
// stored (no matrix in f16), its f16 embedding table and output head split into row chunks
// wherever they exceed one storage binding (on lavapipe: 128 MiB), the load estimate agrees
// with what it allocated, and every position's logits agree with the CPU reference (same
// top-1, the usual tolerance).
#include "compute/engine/Engine.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/tokenizer/Tokenizer.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <memory>

using namespace inferscope;
using namespace inferscope::compute;

class SlowQwenShapeTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    void runsAsStoredLikeTheReference(const models::SyntheticModelSpec& spec, const char* name) {
        const auto path = std::filesystem::path(dir_.path().toStdString()) / name;
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        QCOMPARE(model.config.vocabSize, 151936u);
        QCOMPARE(model.tokenizer.tokens.size(), std::size_t(151936));
        const models::Tokenizer tokenizer(model.tokenizer);
        const auto prompt = tokenizer.encode("The cost of a token is the bytes it reads.", false);
        QVERIFY(prompt.size() >= 4);

        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        options.kvCapacityTokens = 256;
        const auto start = std::chrono::steady_clock::now();
        Engine engine(model, options);
        const double loadSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::uint64_t binding = engine.context().info().maxBindingBytes();
        bool split = false;
        for (const auto& matrix : engine.weightMatrices()) {
            QVERIFY(matrix.bytes <= binding * matrix.chunks);
            QVERIFY2(matrix.format != WeightFormat::F16 || matrix.name == "token_embd",
                     matrix.name.c_str());
            if (matrix.bytes > binding) {
                QVERIFY(matrix.chunks > 1);
                split = true;
            }
        }
        qInfo("%s: %s; engine built in %.1f s; binding limit %llu MiB; embedding table %s", name,
              engine.weightFormatLabel().c_str(), loadSeconds, (unsigned long long)(binding >> 20),
              split ? "split into row chunks" : "fits one binding on this device");
        QVERIFY(split || binding > (300ull << 20));
        // The load estimate (what the footprint check refuses by) is what the engine holds.
        const auto footprint =
            vulkanLoadFootprint(model.config, model.weights, options, engine.context().info());
        const auto memory = engine.memory();
        qInfo("device bytes: estimate %llu, engine %llu",
              (unsigned long long)footprint.deviceBytes(), (unsigned long long)memory.deviceBytes);
        QVERIFY(footprint.deviceBytes() <= memory.deviceBytes);
        QVERIFY(double(footprint.deviceBytes()) >= 0.99 * double(memory.deviceBytes));

        const models::ReferenceTransformer reference(model.config,
                                                     models::dequantizeAll(model.weights), 2);
        const auto vocab = model.config.vocabSize;
        auto cache = reference.newCache();
        const auto cpuPrompt = reference.forward(prompt, cache, true);
        auto step = engine.step({{1, prompt}}, true);
        QVERIFY(tests::compareLogits(step.sequences[0].logits, cpuPrompt, vocab, "prefill") <= 1.0);
        std::int32_t next = step.sequences[0].argmax.back();
        for (int i = 0; i < 4; ++i) {
            const std::vector<std::int32_t> one = {next};
            const auto cpu = reference.forward(one, cache);
            auto gpu = engine.step({{1, one}});
            QVERIFY(tests::compareLogits(gpu.sequences[0].logits, cpu, vocab, "decode") <= 1.0);
            QCOMPARE(gpu.sequences[0].argmax[0], models::argmax(cpu));
            next = gpu.sequences[0].argmax[0];
        }
        QCOMPARE(engine.context().validationLog().errors(), 0u);
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void generatesLikeTheReferenceInRowChunks() {
        runsAsStoredLikeTheReference(models::qwen25HalfBillionShape(models::TensorType::Q8_0),
                                     "qwen-shape-q8_0.gguf");
    }

    void q4KMMixAsDownloadedRunsAsStored() {
        auto spec = models::qwen25HalfBillionShape(models::TensorType::F16);
        spec.typeMix = models::QuantPreset::Q4_K_M;
        runsAsStoredLikeTheReference(spec, "qwen-shape-q4_k_m.gguf");
    }
};

QTEST_GUILESS_MAIN(SlowQwenShapeTest)
#include "test_slow_qwen_shape.moc"
