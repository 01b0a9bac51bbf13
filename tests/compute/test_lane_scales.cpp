// The lane-scale copy of the int4 group scales, of q4_1's scale words and of the planes
// formats' high bits and scales (compute/formats/LaneScaleLayout.hpp) against the packed ones
// it copies. On a device whose
// kernels read copies (lavapipe: 8 lanes of 8 rows), every kernel that takes one gives the same
// bits with the copy as without it: matvec, ffn_gateup and qkv_rope in both RoPE pairings, for one
// token and for prefill batches, on row counts that leave slots past the last row. Zeroing the copy
// then zeroes every output: the copy is what the kernel read. Whole engines (llama and qwen2
// shapes, adjacent and split-half RoPE) give the same logits with copies as without, and count what
// their kernels read.
#include "compute/engine/Engine.hpp"
#include "compute/engine/Kernels.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "compute/formats/LaneScaleLayout.hpp"
#include "models/LoadedModel.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QtTest>

#include <QTemporaryDir>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

using namespace inferscope;
using namespace inferscope::compute;

namespace {

std::vector<float> randomValues(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(n);
    for (auto& v : values) v = dist(rng);
    return values;
}

// The first word where two results differ, or -1.
std::ptrdiff_t firstDifference(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return std::ptrdiff_t(i);
    return -1;
}

bool allZero(const std::vector<float>& values) {
    return std::all_of(values.begin(), values.end(), [](float v) { return v == 0.0f; });
}

} // namespace

class LaneScalesTest : public QObject {
    Q_OBJECT

    std::unique_ptr<VulkanContext> context_;
    std::unique_ptr<Kernels> kernels_;
    std::unique_ptr<CommandRecorder> recorder_;

    // One matrix of `rows` x `cols` packed once and uploaded twice: with the copy in `order`
    // and without one.
    struct MatrixPair {
        DeviceMatrix withCopy, without;
    };
    MatrixPair upload(WeightFormat format, std::uint32_t rows, std::uint32_t cols,
                      const LaneScaleOrder& order, std::uint32_t seed) {
        const auto values = randomValues(std::size_t(rows) * cols, seed);
        const MatrixPart part{values, rows, nullptr};
        const auto packed = packForGpu(format, std::span(&part, 1), cols);
        MatrixPair pair{uploadPacked(*context_, packed, "with copy", std::nullopt, &order),
                        uploadPacked(*context_, packed, "without")};
        return pair;
    }
    Buffer deviceVector(const std::vector<float>& values, const char* label) {
        Buffer buffer(*context_, std::max<std::size_t>(16, values.size() * 4),
                      BufferKind::DeviceLocal, label);
        buffer.fillZero();
        buffer.upload(std::span<const float>(values));
        return buffer;
    }
    static void zeroCopy(DeviceMatrix& matrix) {
        const std::uint64_t offset = std::uint64_t(matrix.laneScaleWords) * 4;
        const std::vector<std::uint32_t> zeros((matrix.bytes() - offset) / 4, 0u);
        matrix.buffer.upload(std::span<const std::uint32_t>(zeros), offset);
    }
    // Runs `record` on the copy and on the packed scales, then on a zeroed copy; `read`
    // returns every output of the last run.
    template <typename Record, typename Read>
    void compare(MatrixPair& pair, const QString& what, Record record, Read read) {
        QVERIFY2(pair.withCopy.laneScaleWords != 0, qPrintable(what + ": no copy uploaded"));
        QCOMPARE(pair.without.laneScaleWords, 0u);
        auto run = [&](const DeviceMatrix& matrix) {
            recorder_->begin();
            record(matrix);
            recorder_->submitAndWait();
            return read();
        };
        const auto packed = run(pair.without), copied = run(pair.withCopy);
        QVERIFY2(!allZero(packed), qPrintable(what + ": all outputs zero"));
        const auto at = firstDifference(packed, copied);
        QVERIFY2(at < 0, qPrintable(QString("%1: output %2 is %3 with the copy, %4 without")
                                        .arg(what)
                                        .arg(at)
                                        .arg(at < 0 ? 0.0 : copied[std::size_t(at)])
                                        .arg(at < 0 ? 0.0 : packed[std::size_t(at)])));
        zeroCopy(pair.withCopy);
        QVERIFY2(allZero(run(pair.withCopy)), qPrintable(what + ": the copy was not read"));
    }

private slots:
    void initTestCase() {
        context_ = std::make_unique<VulkanContext>();
        const auto tuning = KernelTuning::forDevice(context_->info());
        if (!tuning.readsLaneScales()) {
            // A CPU device is where the copy pays (one fetch per texel call on lavapipe).
            QVERIFY2(context_->info().type != "cpu", "a CPU device that reads no copies");
            QSKIP("this device's kernels read no lane-scale copies");
        }
        kernels_ = std::make_unique<Kernels>(*context_, tuning);
        recorder_ = std::make_unique<CommandRecorder>(*context_);
    }

    void matvecReadsTheCopy() {
        std::uint32_t seed = 10;
        // 64 rows take the interleaved code order, 72 the row-major one and leave 56 slots
        // past the last row; one token and a prefill tile.
        struct Case {
            std::uint32_t rows, cols, tokens;
        };
        for (auto format : {WeightFormat::Int4G128, WeightFormat::Int4G64, WeightFormat::Q4_1}) {
            for (const Case c :
                 {Case{64, 128, 1}, Case{64, 320, 9}, Case{72, 320, 1}, Case{72, 128, 9}}) {
                auto pair = upload(format, c.rows, c.cols, {SlotRowOrder::Plain}, seed++);
                auto input = deviceVector(randomValues(c.tokens * c.cols, seed++), "x");
                auto norm = deviceVector(randomValues(c.cols, seed++), "norm");
                auto output = deviceVector(std::vector<float>(c.tokens * c.rows), "y");
                auto record = [&](const DeviceMatrix& matrix) {
                    MatvecArgs args;
                    args.weights = &matrix;
                    args.input = &input;
                    args.inputStride = c.cols;
                    args.output = &output;
                    args.outputStride = c.rows;
                    args.tokens = c.tokens;
                    args.normWeight = &norm;
                    args.eps = 1e-5f;
                    kernels_->matvec(*recorder_, args, "matvec");
                };
                compare(pair,
                        QString("matvec %1 %2x%3, %4 tokens")
                            .arg(weightFormatName(format).data())
                            .arg(c.rows)
                            .arg(c.cols)
                            .arg(c.tokens),
                        record, [&] { return output.read<float>(c.tokens * c.rows); });
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    void gateUpReadsTheCopy() {
        std::uint32_t seed = 100;
        for (auto format : {WeightFormat::Int4G128, WeightFormat::Int4G64, WeightFormat::Q4_1}) {
            // 40 gate and 40 up rows: slots past the 80th in the second row group.
            for (std::uint32_t ffn : {32u, 40u}) {
                for (std::uint32_t tokens : {1u, 9u}) {
                    const std::uint32_t cols = 192;
                    auto pair = upload(format, 2 * ffn, cols, {SlotRowOrder::GateUpPairs}, seed++);
                    auto input = deviceVector(randomValues(tokens * cols, seed++), "x");
                    auto norm = deviceVector(randomValues(cols, seed++), "norm");
                    auto output = deviceVector(std::vector<float>(tokens * ffn), "act");
                    auto record = [&](const DeviceMatrix& matrix) {
                        GateUpArgs args;
                        args.weights = &matrix;
                        args.input = &input;
                        args.inputStride = cols;
                        args.output = &output;
                        args.outputStride = ffn;
                        args.tokens = tokens;
                        args.normWeight = &norm;
                        kernels_->ffnGateUp(*recorder_, args, "gateup");
                    };
                    compare(pair,
                            QString("ffn_gateup %1 ffn %2, %3 tokens")
                                .arg(weightFormatName(format).data())
                                .arg(ffn)
                                .arg(tokens),
                            record, [&] { return output.read<float>(tokens * ffn); });
                    if (QTest::currentTestFailed()) return;
                }
            }
        }
    }

    void qkvRopeReadsTheCopy() {
        std::uint32_t seed = 200;
        const std::uint32_t heads = 3, kvHeads = 1, blockSize = 4, maxBlocks = 4;
        const std::vector<float> invFrequency = randomValues(32, 7);
        auto rope = deviceVector(invFrequency, "rope");
        std::vector<std::uint32_t> tables(maxBlocks);
        for (std::uint32_t i = 0; i < maxBlocks; ++i) tables[i] = (i * 3 + 1) % maxBlocks;
        Buffer tableBuffer(*context_, tables.size() * 4, BufferKind::Upload, "tables");
        tableBuffer.upload(std::span<const std::uint32_t>(tables));
        const std::vector<TokenInfo> positions = {{0, 0}, {0, 1}, {0, 5}, {0, 9}, {0, 15}};
        Buffer tokenBuffer(*context_, positions.size() * sizeof(TokenInfo), BufferKind::Upload,
                           "tokens");
        tokenBuffer.upload(std::span<const TokenInfo>(positions));
        // headDim 16: 80 rows, slots past them; headDim 64: 320 rows in the interleaved order.
        for (const auto& [format, headDim] :
             {std::pair{WeightFormat::Int4G128, 16u}, std::pair{WeightFormat::Int4G64, 64u},
              std::pair{WeightFormat::Q4_1, 16u}}) {
            for (bool splitHalf : {false, true}) {
                for (std::uint32_t tokens : {1u, 5u}) {
                    const std::uint32_t cols = 128, rows = (heads + 2 * kvHeads) * headDim;
                    auto pair = upload(format, rows, cols,
                                       {SlotRowOrder::RopePairs, headDim, splitHalf}, seed++);
                    auto input = deviceVector(randomValues(tokens * cols, seed++), "x");
                    auto norm = deviceVector(randomValues(cols, seed++), "norm");
                    auto queries = deviceVector(std::vector<float>(tokens * heads * headDim), "q");
                    const std::uint64_t kvHalves =
                        std::uint64_t(maxBlocks) * 2 * kvHeads * blockSize * headDim;
                    Buffer cache(*context_, kvHalves * 2, BufferKind::DeviceLocal, "kv");
                    auto record = [&](const DeviceMatrix& matrix) {
                        QkvRopeArgs args;
                        args.weights = &matrix;
                        args.input = &input;
                        args.inputStride = cols;
                        args.queries = &queries;
                        args.queryStride = heads * headDim;
                        args.tokens = tokens;
                        args.normWeight = &norm;
                        args.ropeInvFrequency = &rope;
                        args.splitHalf = splitHalf;
                        args.heads = heads;
                        args.kvHeads = kvHeads;
                        args.headDim = headDim;
                        args.kv = {&cache, &tokenBuffer, &tableBuffer, blockSize, maxBlocks};
                        kernels_->qkvRope(*recorder_, args, "qkv");
                    };
                    // The queries, then the cache's halves widened to floats.
                    auto read = [&] {
                        auto values = queries.read<float>(tokens * heads * headDim);
                        for (auto half : cache.read<std::uint16_t>(kvHalves))
                            values.push_back(models::halfToFloat(half));
                        return values;
                    };
                    cache.fillZero();
                    compare(pair,
                            QString("qkv_rope %1 head %2 %3, %4 tokens")
                                .arg(weightFormatName(format).data())
                                .arg(headDim)
                                .arg(splitHalf ? "split-half" : "adjacent")
                                .arg(tokens),
                            record, read);
                    if (QTest::currentTestFailed()) return;
                }
            }
        }
    }

    // The planes formats (compute/formats/GgmlPlanes.hpp) carry their high bits and scales
    // in the copy: every kernel gives the same bits with it as with the packed layout. Rows
    // of 96 (padded to 128) for the types of 32, of 256 for the super-blocks.
    void planesReadTheCopy() {
        std::uint32_t seed = 400;
        for (auto format : {WeightFormat::Q5_0, WeightFormat::Q5_1, WeightFormat::IQ4_NL,
                            WeightFormat::Q2_K, WeightFormat::Q3_K, WeightFormat::Q4_K,
                            WeightFormat::Q5_K, WeightFormat::Q6_K, WeightFormat::IQ4_XS}) {
            const auto type = *weightFormatInfo(format).storedType;
            const std::uint32_t cols =
                models::tensorTypeTraits(type).blockElements == 256 ? 256 : 96;
            const QString name = weightFormatName(format).data();
            for (std::uint32_t tokens : {1u, 9u}) {
                const std::uint32_t rows = 72;
                auto pair = upload(format, rows, cols, {SlotRowOrder::Plain}, seed++);
                auto input = deviceVector(randomValues(tokens * cols, seed++), "x");
                auto output = deviceVector(std::vector<float>(tokens * rows), "y");
                auto record = [&](const DeviceMatrix& matrix) {
                    MatvecArgs args;
                    args.weights = &matrix;
                    args.input = &input;
                    args.inputStride = paddedColumns(cols);
                    args.output = &output;
                    args.outputStride = rows;
                    args.tokens = tokens;
                    kernels_->matvec(*recorder_, args, "matvec");
                };
                compare(pair, QString("matvec %1, %2 tokens").arg(name).arg(tokens), record,
                        [&] { return output.read<float>(tokens * rows); });
                if (QTest::currentTestFailed()) return;
            }
            {
                const std::uint32_t ffn = 40;
                auto pair = upload(format, 2 * ffn, cols, {SlotRowOrder::GateUpPairs}, seed++);
                auto input = deviceVector(randomValues(paddedColumns(cols), seed++), "x");
                auto output = deviceVector(std::vector<float>(ffn), "act");
                auto record = [&](const DeviceMatrix& matrix) {
                    GateUpArgs args;
                    args.weights = &matrix;
                    args.input = &input;
                    args.inputStride = paddedColumns(cols);
                    args.output = &output;
                    args.outputStride = ffn;
                    args.tokens = 1;
                    kernels_->ffnGateUp(*recorder_, args, "gateup");
                };
                compare(pair, "ffn_gateup " + name, record,
                        [&] { return output.read<float>(ffn); });
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    // The copy follows its kernel's order: a matrix carrying one for another kernel is read
    // through its packed scales.
    void otherOrdersAreNotRead() {
        const std::uint32_t rows = 64, cols = 128;
        auto pair = upload(WeightFormat::Int4G128, rows, cols, {SlotRowOrder::GateUpPairs}, 300);
        zeroCopy(pair.withCopy);
        auto input = deviceVector(randomValues(cols, 301), "x");
        auto output = deviceVector(std::vector<float>(rows), "y");
        MatvecArgs args;
        args.weights = &pair.withCopy;
        args.input = &input;
        args.inputStride = cols;
        args.output = &output;
        args.outputStride = rows;
        args.tokens = 1;
        recorder_->begin();
        kernels_->matvec(*recorder_, args, "matvec");
        recorder_->submitAndWait();
        QVERIFY(!allZero(output.read<float>(rows)));
    }

    void engineLogitsAreTheSameWithAndWithoutCopies() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // llama: adjacent RoPE pairs, int4-g128; qwen2: split-half pairs and biases, int4-g64 and
        // q4_1.
        struct Case {
            const char* architecture;
            WeightFormat format;
            std::uint32_t hidden;
        };
        // And two planes formats (the copy also carries high bits), one of super-blocks.
        for (const auto& [architecture, format, hidden] :
             {Case{"llama", WeightFormat::Int4G128, 128}, Case{"qwen2", WeightFormat::Int4G64, 128},
              Case{"qwen2", WeightFormat::Q4_1, 128}, Case{"qwen2", WeightFormat::Q5_0, 128},
              Case{"llama", WeightFormat::Q6_K, 256}}) {
            models::SyntheticModelSpec spec;
            spec.architecture = architecture;
            spec.qkvBias = spec.architecture == std::string("qwen2");
            spec.hiddenSize = hidden;
            spec.heads = hidden / 64;
            spec.kvHeads = 1;
            spec.headDim = 64;
            spec.ffnSize = hidden == 256 ? 512 : 192;
            spec.seed = 51;
            const auto path = std::filesystem::path(dir.path().toStdString()) /
                              (std::string(architecture) + ".gguf");
            models::writeSyntheticGguf(spec, path);
            const auto model = models::loadModel(path);
            const QString what =
                QString("%1 %2").arg(architecture, weightFormatName(format).data());
            EngineOptions options;
            options.weightFormat = format;
            Engine copies(model, options);
            options.tuning = KernelTuning::forDevice(context_->info());
            options.tuning->laneScaleCopies = false;
            Engine packed(model, options);
            // Every projection and the head carry a copy; the kernels read it in place of
            // the packed scales, so they read less than the buffer holds.
            for (std::size_t m = 0; m < copies.weightMatrices().size(); ++m) {
                const auto& withCopy = copies.weightMatrices()[m];
                const auto& without = packed.weightMatrices()[m];
                if (withCopy.name == "token_embd") continue;
                QVERIFY2(withCopy.bytes > without.bytes, withCopy.name.c_str());
                QVERIFY2(withCopy.bytesRead < withCopy.bytes, withCopy.name.c_str());
                QCOMPARE(without.bytesRead, without.bytes);
            }
            std::vector<std::int32_t> tokens = {1, 17, 230, 5, 99, 42, 7, 3, 250};
            for (int step = 0; step < 5; ++step) {
                const auto a = copies.step({{1, tokens}}).sequences[0].logits;
                const auto b = packed.step({{1, tokens}}).sequences[0].logits;
                const auto at = firstDifference(a, b);
                QVERIFY2(at < 0,
                         qPrintable(
                             QString("%1 step %2: logit %3 differs").arg(what).arg(step).arg(at)));
                tokens = {std::int32_t(std::max_element(a.begin(), a.end()) - a.begin())};
            }
            QCOMPARE(copies.context().validationLog().errors(), 0u);
        }
    }

    void cleanupTestCase() {
        recorder_.reset();
        kernels_.reset();
        if (!context_) return;
        for (const auto& m : context_->validationLog().messages()) qWarning("%s", m.c_str());
        QCOMPARE(context_->validationLog().errors(), 0u);
        context_.reset();
    }
};

QTEST_APPLESS_MAIN(LaneScalesTest)
#include "test_lane_scales.moc"
