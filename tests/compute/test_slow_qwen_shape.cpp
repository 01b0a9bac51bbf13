// The chapter's model in shape (Qwen2.5-0.5B: 151,936 embedding rows, tied, Q/K/V biases)
// with random Q8_0 weights, written by the synthetic-model writer: the Vulkan engine runs it
// as stored, its f16 embedding table and Q8_0 output head split into row chunks wherever
// they exceed one storage binding (on lavapipe: 128 MiB), and every position's logits agree
// with the CPU reference (same top-1, the usual tolerance).
#include "compute/engine/Engine.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/tokenizer/Tokenizer.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace inferscope;
using namespace inferscope::compute;

class SlowQwenShapeTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<models::LoadedModel> model_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "qwen-shape.gguf";
        models::writeSyntheticGguf(models::qwen25HalfBillionShape(models::TensorType::Q8_0), path);
        model_ = std::make_unique<models::LoadedModel>(models::loadModel(path));
        QCOMPARE(model_->config.vocabSize, 151936u);
        QCOMPARE(model_->tokenizer.tokens.size(), std::size_t(151936));
    }

    void generatesLikeTheReferenceInRowChunks() {
        const models::Tokenizer tokenizer(model_->tokenizer);
        const auto prompt = tokenizer.encode("The cost of a token is the bytes it reads.", false);
        QVERIFY(prompt.size() >= 4);

        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        options.kvCapacityTokens = 256;
        Engine engine(*model_, options);
        const std::uint64_t binding = engine.context().info().maxBindingBytes();
        bool split = false;
        for (const auto& matrix : engine.weightMatrices()) {
            QVERIFY(matrix.bytes <= binding * matrix.chunks);
            if (matrix.bytes > binding) {
                QVERIFY(matrix.chunks > 1);
                split = true;
            }
        }
        qInfo("binding limit %llu MiB; embedding table %s", (unsigned long long)(binding >> 20),
              split ? "split into row chunks" : "fits one binding on this device");
        QVERIFY(split || binding > (300ull << 20));

        const models::ReferenceTransformer reference(model_->config,
                                                     models::dequantizeAll(model_->weights), 2);
        const auto vocab = model_->config.vocabSize;
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
};

QTEST_GUILESS_MAIN(SlowQwenShapeTest)
#include "test_slow_qwen_shape.moc"
