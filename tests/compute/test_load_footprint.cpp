// compute::LoadFootprint: the estimate made from a file's shapes agrees with what the engine
// really allocates (EngineMemory), format by format and with matrices split into row
// chunks; the packers' arrays are the size packedMatrixSize says; LabSession::load refuses
// a model that does not fit on the device, on the host, or on the CPU reference with a
// message naming both figures, and the previous model still generates afterwards.
#include "compute/engine/Engine.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "compute/session/LabSession.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "models/ModelError.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/compute/SessionRequests.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>

using namespace inferscope;

namespace {

using tests::vulkanAvailable;
using tests::vulkanChoice;

// Buffers are allocated in the device's alignment (requirements.size), which the estimate
// cannot know; that rounding is far below this on the test model.
constexpr double kTolerance = 0.01;

std::uint64_t partBytes(const compute::LoadFootprint& footprint, const std::string& prefix,
                        bool device) {
    for (const auto& part : footprint.parts)
        if (part.what.rfind(prefix, 0) == 0) return device ? part.deviceBytes : part.hostBytes;
    throw std::logic_error("no footprint part " + prefix);
}

bool near(std::uint64_t estimate, std::uint64_t actual) {
    return std::fabs(double(estimate) - double(actual)) <= kTolerance * double(actual);
}

std::string figures(std::uint64_t estimate, std::uint64_t actual) {
    return "estimate " + std::to_string(estimate) + ", engine " + std::to_string(actual);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestLoadFootprint : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

    // The estimate against the engine built with the same options on the same device.
    void compareWithEngine(const std::string& format, std::uint64_t maxChunkBytes,
                           const std::string& path) {
        const auto model = models::loadModel(path);
        auto options = compute::engineOptionsFor(vulkanChoice(format));
        options.maxMatrixChunkBytes = maxChunkBytes;
        compute::Engine engine(model, options);
        const auto footprint = compute::vulkanLoadFootprint(model.config, model.weights, options,
                                                            engine.context().info());
        const auto memory = engine.memory();
        const auto weights = partBytes(footprint, "weights", true);
        const auto kv = partBytes(footprint, "KV cache", true);
        const auto steps =
            partBytes(footprint, "activations", true) + partBytes(footprint, "logits", true);
        qInfo("%s (chunks of at most %llu bytes): weights %s; KV %s; step buffers %s; device %s",
              format.c_str(), static_cast<unsigned long long>(maxChunkBytes),
              figures(weights, memory.weightBytes).c_str(),
              figures(kv, memory.kvReservedBytes).c_str(),
              figures(steps, memory.activationBytes).c_str(),
              figures(footprint.deviceBytes(), memory.deviceBytes).c_str());
        QVERIFY2(near(weights, memory.weightBytes), figures(weights, memory.weightBytes).c_str());
        QCOMPARE(kv, memory.kvReservedBytes); // requested sizes on both sides: exact
        QVERIFY2(near(steps, memory.activationBytes),
                 figures(steps, memory.activationBytes).c_str());
        QVERIFY2(near(footprint.deviceBytes(), memory.deviceBytes),
                 figures(footprint.deviceBytes(), memory.deviceBytes).c_str());
        // The estimate never counts the device's rounding, so it may only fall short.
        QVERIFY(footprint.deviceBytes() <= memory.deviceBytes);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 3;
        spec.hiddenSize = 256;
        spec.heads = 4;
        spec.kvHeads = 2;
        spec.headDim = 64;
        spec.ffnSize = 512;
        spec.vocabSize = 1000;
        model_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, model_);
    }

    // One layout: what each packer builds is the size packedMatrixSize says, for a whole
    // matrix and for a chunk of rows cut from it.
    void packedSizesAreThePackersOwn() {
        std::mt19937 random(7);
        std::normal_distribution<float> normal(0.0f, 0.05f);
        for (const auto format : compute::allWeightFormats()) {
            for (const std::uint32_t cols : {64u, 96u, 160u}) {
                // Super-block formats from values need rows of 64k (whole super-blocks run on
                // across rows): 96 and 160 are refused.
                const auto stored = compute::weightFormatInfo(format).storedType;
                if (stored && models::tensorTypeTraits(*stored).blockElements == 256 && cols % 64)
                    continue;
                const std::uint32_t rows = 40;
                std::vector<float> values(std::uint64_t(rows) * cols);
                for (auto& v : values) v = normal(random);
                const compute::MatrixPart part{values, rows, nullptr};
                const auto packed = compute::packForGpu(format, std::span(&part, 1), cols);
                const auto size = compute::packedMatrixSize(format, rows, cols);
                const std::string name(compute::weightFormatName(format));
                QVERIFY2(packed.words.size() == size.words,
                         (name + " " + std::to_string(cols)).c_str());
                QCOMPARE(std::uint64_t(packed.formatWords), size.formatWords);
                const std::uint32_t granule = compute::packedRowGranule(format, cols);
                const std::uint32_t chunkRows = (rows / 2 + granule - 1) / granule * granule;
                const compute::RowRange range{0, chunkRows};
                const auto chunk = compute::stackPackedRows(packed, std::span(&range, 1));
                QCOMPARE(std::uint64_t(chunk.words.size()),
                         compute::packedMatrixSize(format, chunkRows, cols).words);
            }
        }
    }

    void memAvailableIsRead() {
        QCOMPARE(*compute::parseMemAvailable("MemTotal:  8000 kB\nMemAvailable:    2048 kB\n"),
                 std::uint64_t(2048) * 1024);
        QVERIFY(!compute::parseMemAvailable("MemTotal: 8000 kB\n").has_value());
        const auto host = compute::hostAvailableBytes();
        QVERIFY(host.has_value());
        QVERIFY(*host > 0);
    }

    void estimateMatchesTheEngine_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<qulonglong>("maxChunkBytes");
        for (const char* format : {"fp16", "int4-g128", "q8_0", "fp32", "as-stored"})
            QTest::newRow(format) << QString(format) << qulonglong(0);
        // Row chunks: the embedding table and every matrix split across buffers.
        QTest::newRow("fp16 chunked") << QString("fp16") << qulonglong(48 * 1024);
        QTest::newRow("int4-g128 chunked") << QString("int4-g128") << qulonglong(24 * 1024);
    }

    void estimateMatchesTheEngine() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device");
        QFETCH(QString, format);
        QFETCH(qulonglong, maxChunkBytes);
        compareWithEngine(format.toStdString(), maxChunkBytes, model_);
    }

    // llama.cpp's Q4_K_M mix: layer 1's Q|K|V in two sections (attn_v in Q6_K), each with
    // its own lane-scale copy where the kernels read one; whole and in row chunks.
    void estimateMatchesTheEngineOnAMixedFile() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device");
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = 256;
        spec.heads = 4;
        spec.kvHeads = 1;
        spec.headDim = 64;
        spec.ffnSize = 512;
        spec.vocabSize = 1000;
        spec.typeMix = models::QuantPreset::Q4_K_M;
        const auto path = dir_.filePath("mixed.gguf").toStdString();
        models::writeSyntheticGguf(spec, path);
        compareWithEngine("as-stored", 0, path);
        compareWithEngine("as-stored", 32 * 1024, path);
    }

    void cpuEstimateCountsWhatTheReferenceReads() {
        // The reference reads the stored matrices in place and keeps f32 norms and biases:
        // the estimate equals what a reference built from the store says it holds. As Q8_0
        // (about 1.06 bytes a weight) that is far below an f32 copy of every tensor.
        auto spec = models::SyntheticModelSpec{};
        spec.layers = 2;
        spec.hiddenSize = 256;
        spec.ffnSize = 512;
        spec.weightType = models::TensorType::Q8_0;
        const auto q8Path = dir_.filePath("synthetic-q8_0.gguf").toStdString();
        models::writeSyntheticGguf(spec, q8Path);
        for (const auto& path : {model_, q8Path}) {
            const auto stored = models::loadModel(path);
            const auto estimate = compute::cpuReferenceLoadFootprint(stored.config, stored.weights);
            QCOMPARE(estimate.deviceBytes(), std::uint64_t(0));
            const models::ReferenceTransformer reference(stored.config, stored.weights, 1);
            QCOMPARE(partBytes(estimate, "weights", false) +
                         partBytes(estimate, "norms, biases", false),
                     reference.weightBytes());
        }
        const auto q8 = models::loadModel(q8Path);
        const auto q8Estimate = compute::cpuReferenceLoadFootprint(q8.config, q8.weights);
        QVERIFY(partBytes(q8Estimate, "weights", false) <
                q8.weights.totalElements() * sizeof(float) / 3);

        const auto model = models::loadModel(model_);
        const auto footprint = compute::cpuReferenceLoadFootprint(model.config, model.weights);
        // Its KV cache: fp32 K and V per layer, for the positions the engine reserves (the
        // model's context of 512 is the smaller here).
        const auto& c = model.config;
        QCOMPARE(partBytes(footprint, "KV cache", false),
                 std::uint64_t(c.layers) * 2 * c.kvHeads * c.headDim * 4 *
                     std::min<std::uint64_t>(c.contextLength, 4096));
    }

    void refusesWhatTheDeviceCannotHold() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device");
        compute::LabSession session;
        compute::LoadOptions options;
        options.choice = vulkanChoice("int8-row");
        QVERIFY(session.load(model_, options).has_value());
        const auto before = session.generate(tests::greedyRequest(4));

        options.choice = vulkanChoice("fp16");
        const auto footprint = compute::estimateLoadFootprint(models::loadModel(model_),
                                                              options.choice, options.available);
        options.available.deviceBytes = footprint.deviceBytes() - 1;
        try {
            session.load(model_, options);
            QFAIL("a model one byte too large for the device was loaded");
        } catch (const models::ModelError& e) {
            const std::string message = e.what();
            QVERIFY2(contains(message, "device memory for fp16 weights"), e.what());
            QVERIFY2(
                contains(message, compute::groupThousands(std::int64_t(footprint.deviceBytes()))),
                e.what());
            QVERIFY2(contains(message,
                              compute::groupThousands(std::int64_t(footprint.deviceBytes() - 1))),
                     e.what());
        }
        // The previous model (int8-row) still runs, and generates what it did.
        QCOMPARE(session.generationFormat(), std::string("int8-row"));
        const auto after = session.generate(tests::greedyRequest(4));
        QCOMPARE(after->generatedIds, before->generatedIds);

        // Exactly enough fits.
        options.available.deviceBytes = footprint.deviceBytes();
        const auto loaded = session.load(model_, options);
        QVERIFY(loaded.has_value());
        QCOMPARE(session.generationFormat(), std::string("fp16"));
        QVERIFY(!loaded->card->footprint.rows.empty());
        QCOMPARE(loaded->card->footprint.id, std::string("load-footprint"));
    }

    void refusesWhatTheHostCannotHold() {
        if (!vulkanAvailable()) QSKIP("no Vulkan device");
        compute::LabSession session;
        compute::LoadOptions options;
        options.choice = vulkanChoice("fp16");
        QVERIFY(session.load(model_, options).has_value());
        const auto before = session.generate(tests::greedyRequest(4));

        options.choice = vulkanChoice("int4-g128");
        const auto footprint = compute::estimateLoadFootprint(models::loadModel(model_),
                                                              options.choice, options.available);
        QVERIFY(footprint.hostBytes() > 0);
        options.available.hostBytes = footprint.hostBytes() / 2;
        try {
            session.load(model_, options);
            QFAIL("a model twice too large for the host was loaded");
        } catch (const models::ModelError& e) {
            QVERIFY2(contains(e.what(), "of host memory"), e.what());
            QVERIFY2(contains(e.what(), compute::humanBytes(double(footprint.hostBytes()))),
                     e.what());
            QVERIFY2(contains(e.what(), compute::humanBytes(double(footprint.hostBytes() / 2))),
                     e.what());
        }
        QCOMPARE(session.generationFormat(), std::string("fp16"));
        QCOMPARE(session.generate(tests::greedyRequest(4))->generatedIds, before->generatedIds);
    }

    void refusesWhatTheCpuReferenceCannotHold() {
        compute::LabSession session;
        compute::LoadOptions options; // the CPU reference
        QVERIFY(session.load(model_, options).has_value());
        const auto before = session.generate(tests::greedyRequest(4));

        const auto footprint = compute::estimateLoadFootprint(models::loadModel(model_),
                                                              options.choice, options.available);
        options.available.hostBytes = footprint.hostBytes() - 1;
        try {
            session.load(model_, options);
            QFAIL("a model one byte too large for the host was loaded on the CPU reference");
        } catch (const models::ModelError& e) {
            QVERIFY2(contains(e.what(), "of host memory for the CPU reference's fp32 weights"),
                     e.what());
            QVERIFY2(
                contains(e.what(), compute::groupThousands(std::int64_t(footprint.hostBytes()))),
                e.what());
        }
        QCOMPARE(session.backendName(), std::string("cpu"));
        QCOMPARE(session.generate(tests::greedyRequest(4))->generatedIds, before->generatedIds);
        // A model loaded without a backend is not checked: nothing is built.
        compute::LoadOptions modelOnly = options;
        modelOnly.buildBackend = false;
        QVERIFY(session.load(model_, modelOnly).has_value());
    }
};

QTEST_APPLESS_MAIN(TestLoadFootprint)
#include "test_load_footprint.moc"
