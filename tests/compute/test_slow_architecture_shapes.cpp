// Real shapes of the newer architectures with random weights (models/synthetic/
// SyntheticShapes.hpp): Qwen3-0.6B with q8_0 weights and Gemma-3-270M with q4_0 weights (its
// 262,144-row embedding split into row chunks on lavapipe) load, the load estimate
// (LoadFootprint) agrees with what the engine allocates (KV exactly: Gemma's 15 windowed
// layers hold a smaller pool than its 3 global ones), the prompt's last logits agree with
// the CPU reference on the same stored weights, and a few greedy tokens decode. Slow: the
// files are 0.2-0.7 GB.
#include "compute/engine/Engine.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticShapes.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <cmath>

using namespace inferscope;
using namespace inferscope::compute;

class SlowArchitectureShapesTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void realShapesLoadFitAndGenerate_data() {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("type");
        QTest::newRow("qwen3-0.6b q8_0") << "qwen3-0.6b" << int(models::TensorType::Q8_0);
        QTest::newRow("gemma-3-270m q4_0") << "gemma-3-270m" << int(models::TensorType::Q4_0);
    }
    void realShapesLoadFitAndGenerate() {
        QFETCH(QString, shape);
        QFETCH(int, type);
        const auto spec = *models::syntheticShape(shape.toStdString(), models::TensorType(type));
        const std::string path = dir_.filePath(shape + ".gguf").toStdString();
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        QCOMPARE(model.config.vocabSize, spec.vocabSize);
        QCOMPARE(model.config.qkNorm, true);

        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        // Gemma: one sequence of up to 8,192 tokens, where the windowed layers' pool (window
        // plus a step's tokens) is a fraction of the global layers' 512 blocks.
        const bool windowed = spec.slidingWindow > 0;
        options.kvCapacityTokens = windowed ? 8192 : 2048;
        options.maxSequences = windowed ? 1 : 4;
        const auto started = std::chrono::steady_clock::now();
        Engine engine(model, options);
        const double loadSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const auto footprint =
            vulkanLoadFootprint(model.config, model.weights, options, engine.context().info());
        const auto memory = engine.memory();
        std::uint64_t kv = 0;
        for (const auto& part : footprint.parts)
            if (part.what.rfind("KV cache", 0) == 0) kv = part.deviceBytes;
        qInfo("%s: engine built in %.1f s; device %llu bytes (estimate %llu), KV %llu (estimate "
              "%llu)",
              qPrintable(shape), loadSeconds, static_cast<unsigned long long>(memory.deviceBytes),
              static_cast<unsigned long long>(footprint.deviceBytes()),
              static_cast<unsigned long long>(memory.kvReservedBytes),
              static_cast<unsigned long long>(kv));
        QCOMPARE(kv, memory.kvReservedBytes);
        QVERIFY(footprint.deviceBytes() <= memory.deviceBytes);
        QVERIFY(double(memory.deviceBytes - footprint.deviceBytes()) <=
                0.01 * double(memory.deviceBytes));
        if (model.config.windowedLayers()) {
            const auto reserved = engine.kvCache().reservedBytesByLayer();
            QCOMPARE(engine.kvCache().windowCapacityBlocks(), 49u); // (511 + 256) / 16 + 1
            QCOMPARE(reserved[0] * 512, reserved[5] * 49);          // layer 0 windowed, 5 global
        }

        const std::vector<std::int32_t> prompt{17, 230, 4000, 61, 999, 3, 1234, 77};
        const models::ReferenceTransformer reference(model.config, model.weights, 2);
        auto cache = reference.newCache();
        const auto expected = reference.forward(prompt, cache);
        auto result = engine.step({{1, prompt}});
        QVERIFY(tests::compareLogits(result.sequences[0].logits, expected, spec.vocabSize,
                                     shape.toStdString()) <= 1.0);
        std::int32_t token = result.sequences[0].argmax[0];
        for (int i = 0; i < 4; ++i) {
            result = engine.step({{1, {token}}});
            token = result.sequences[0].argmax[0];
            QVERIFY(token >= 0 && std::uint32_t(token) < spec.vocabSize);
        }
        QCOMPARE(engine.sequenceLength(1), std::uint32_t(prompt.size() + 4));
    }
};

QTEST_GUILESS_MAIN(SlowArchitectureShapesTest)
#include "test_slow_architecture_shapes.moc"
