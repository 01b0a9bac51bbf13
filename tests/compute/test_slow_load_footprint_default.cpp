// The load footprint of the default model (SmolLM2-135M, Q4_1 / Q8_0 stored, tied
// embeddings, a 49,152-token vocabulary) against what the engine really allocates in three
// formats: the estimate is made from the file's shapes alone, before any weight is packed.
// Needs the model file: skipped when it is absent, unless INFERSCOPE_REQUIRE_MODEL is set.
#include "compute/engine/Engine.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "tests/DefaultModel.hpp"

#include <QtTest>

#include <cmath>

using namespace inferscope;

namespace {
// Only the device's allocation rounding separates the two (see test_load_footprint).
constexpr double kTolerance = 0.01;
} // namespace

class TestSlowLoadFootprintDefault : public QObject {
    Q_OBJECT
private slots:
    void estimateMatchesTheEngine_data() {
        QTest::addColumn<QString>("format");
        for (const char* format : {"fp16", "int4-g128", "as-stored"})
            QTest::newRow(format) << QString(format);
    }

    void estimateMatchesTheEngine() {
        QFETCH(QString, format);
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        const auto model = models::loadModel(path);
        compute::BackendChoice choice;
        choice.kind = compute::BackendChoice::Kind::Vulkan;
        choice.weightFormat = format.toStdString();
        const auto options = compute::engineOptionsFor(choice);
        compute::Engine engine(model, options);
        const auto footprint = compute::vulkanLoadFootprint(model.config, model.weights, options,
                                                            engine.context().info());
        const auto memory = engine.memory();
        std::uint64_t weights = 0;
        for (const auto& part : footprint.parts)
            if (part.what.rfind("weights", 0) == 0) weights = part.deviceBytes;
        qInfo("%s: weights estimate %llu, engine %llu; device estimate %llu, engine %llu",
              qPrintable(format), static_cast<unsigned long long>(weights),
              static_cast<unsigned long long>(memory.weightBytes),
              static_cast<unsigned long long>(footprint.deviceBytes()),
              static_cast<unsigned long long>(memory.deviceBytes));
        QVERIFY(std::fabs(double(weights) - double(memory.weightBytes)) <=
                kTolerance * double(memory.weightBytes));
        QVERIFY(std::fabs(double(footprint.deviceBytes()) - double(memory.deviceBytes)) <=
                kTolerance * double(memory.deviceBytes));
        QVERIFY(footprint.deviceBytes() <= memory.deviceBytes);
    }
};

QTEST_APPLESS_MAIN(TestSlowLoadFootprintDefault)
#include "test_slow_load_footprint_default.moc"
