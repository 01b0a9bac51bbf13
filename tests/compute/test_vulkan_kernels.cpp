// Each GPU kernel against a plain CPU loop on synthetic shapes, odd sizes included (1, 7,
// 33, 577 columns). Runs on whatever device is chosen (lavapipe in CI) with the validation
// layer on (INFERSCOPE_VALIDATION=1 from CTest); the last check is that it reported nothing.
//
// Tolerances: a dot product of n terms may differ from the CPU's by summation order only,
// so |gpu - cpu| <= 1e-5 * sum|w_i x_i| + 1e-6 (f16 weights: the CPU uses the same
// f16-rounded weights). Values written to the f16 KV cache additionally carry one f16
// rounding: 1e-3 relative. Attention (online softmax in f32): 1e-4 absolute on outputs
// of magnitude <= 1.
#include "compute/engine/Kernels.hpp"
#include "compute/formats/ActivationRounding.hpp"
#include "compute/formats/DeviceCodeLayout.hpp"
#include "models/formats/TensorType.hpp"

#include <QtTest>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <span>

using namespace inferscope;
using namespace inferscope::compute;

namespace {

std::vector<float> randomValues(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> values(n);
    for (auto& v : values) v = dist(rng);
    return values;
}

float roundHalf(float v) {
    return models::halfToFloat(models::floatToHalf(v));
}

// [rows][cols] -> [rows][stride] with zero padding.
std::vector<float> padRows(const std::vector<float>& values, std::uint32_t rows, std::uint32_t cols,
                           std::uint32_t stride) {
    std::vector<float> padded(std::size_t(rows) * stride, 0.0f);
    for (std::uint32_t r = 0; r < rows; ++r) {
        std::copy_n(values.begin() + std::ptrdiff_t(r) * cols, cols,
                    padded.begin() + std::ptrdiff_t(r) * stride);
    }
    return padded;
}

struct RopeTable {
    std::vector<float> invFrequency;
};

RopeTable ropeTable(std::uint32_t headDim, float theta) {
    RopeTable table;
    for (std::uint32_t j = 0; j < headDim / 2; ++j) {
        table.invFrequency.push_back(std::pow(theta, -2.0f * float(j) / float(headDim)));
    }
    return table;
}

} // namespace

class VulkanKernelsTest : public QObject {
    Q_OBJECT

    std::unique_ptr<VulkanContext> context_;
    std::vector<std::unique_ptr<Kernels>> variants_;
    Kernels* kernels_ = nullptr; // the variant under test
    // The device's own variant runs every shape; the forced ones a representative few.
    std::vector<std::uint32_t> columnSizes() const {
        if (kernels_ == variants_.front().get()) return {1, 7, 33, 577};
        return {7, 577};
    }
    std::unique_ptr<CommandRecorder> recorder_;
    std::uint64_t roundingVisible_ = 0; // results whose rounding of x exceeds the tolerance

    Buffer deviceVector(const std::vector<float>& values, const char* label) {
        Buffer buffer(*context_, std::max<std::size_t>(16, values.size() * 4),
                      BufferKind::DeviceLocal, label);
        buffer.fillZero();
        buffer.upload(std::span<const float>(values));
        return buffer;
    }
    template <typename T> Buffer deviceArray(const std::vector<T>& values, const char* label) {
        Buffer buffer(*context_, std::max<std::size_t>(16, values.size() * sizeof(T)),
                      BufferKind::Upload, label);
        buffer.upload(std::span<const T>(values));
        return buffer;
    }

    // One token through an 8 x 8 matrix, rows unpadded (8 is a multiple of 4).
    static MatvecArgs oneTokenArgs8x8(const DeviceMatrix& matrix, const Buffer& x,
                                      const Buffer& y) {
        MatvecArgs args;
        args.weights = &matrix;
        args.input = &x;
        args.inputStride = 8;
        args.output = &y;
        args.outputStride = 8;
        args.tokens = 1;
        return args;
    }

    struct MatvecCase {
        std::uint32_t rows, cols, tokens;
        WeightFormat format;
        bool norm, bias, residual, gather, probe;
    };

    void runMatvec(const MatvecCase& c, std::uint32_t seed) {
        const std::uint32_t stride = paddedColumns(c.cols);
        auto weights = randomValues(std::size_t(c.rows) * c.cols, seed);
        const auto cpuWeights = roundTripWeights(weights, c.cols, c.format);
        const std::uint32_t inputRows = c.gather ? c.tokens + 3 : c.tokens;
        auto input = randomValues(std::size_t(inputRows) * c.cols, seed + 1, 2.0f);
        auto normWeight = randomValues(c.cols, seed + 2);
        auto bias = randomValues(c.rows, seed + 3);
        auto previous = randomValues(std::size_t(c.tokens) * c.rows, seed + 4);
        std::vector<std::uint32_t> gather;
        for (std::uint32_t t = 0; t < c.tokens; ++t) gather.push_back((t * 5 + 2) % inputRows);

        auto matrix = uploadMatrix(*context_, weights, c.rows, c.cols, c.format, "W");
        auto inputBuffer = deviceVector(padRows(input, inputRows, c.cols, stride), "x");
        auto normBuffer = uploadVector(*context_, normWeight, "norm");
        auto biasBuffer = uploadVector(*context_, bias, "bias");
        auto outBuffer = deviceVector(previous, "out");
        auto gatherBuffer = deviceArray(gather, "gather");
        const std::uint32_t probeBase = 5;
        auto probeBuffer = deviceVector(std::vector<float>(probeBase + c.rows, 0.0f), "probe");

        MatvecArgs args;
        args.weights = &matrix;
        args.input = &inputBuffer;
        args.inputStride = stride;
        args.output = &outBuffer;
        args.outputStride = c.rows;
        args.tokens = c.tokens;
        args.normWeight = c.norm ? &normBuffer : nullptr;
        args.eps = 1e-5f;
        args.bias = c.bias ? &biasBuffer : nullptr;
        args.residual = c.residual;
        args.gather = c.gather ? &gatherBuffer : nullptr;
        args.probe = c.probe ? &probeBuffer : nullptr;
        args.probeBase = probeBase;
        recorder_->begin();
        kernels_->matvec(*recorder_, args, "matvec");
        recorder_->submitAndWait();
        const auto gpu = outBuffer.read<float>(std::size_t(c.tokens) * c.rows);
        const auto probe = probeBuffer.read<float>(probeBase + c.rows);

        std::vector<float> expectedProbe(c.rows, 0.0f);
        // Kernels that round their activations (INT8_ACTIVATIONS) compute with xhat, the
        // rounding of x * normWeight (compute/formats/ActivationRounding.hpp).
        const bool rounds = kernels_->roundsActivations(matrix);
        for (std::uint32_t t = 0; t < c.tokens; ++t) {
            const float* x = input.data() + std::size_t(c.gather ? gather[t] : t) * c.cols;
            double scale = 1.0;
            if (c.norm) {
                double squares = 0;
                for (std::uint32_t i = 0; i < c.cols; ++i) squares += double(x[i]) * x[i];
                scale = 1.0 / std::sqrt(squares / c.cols + 1e-5);
            }
            std::vector<float> unscaled(x, x + c.cols);
            if (c.norm)
                for (std::uint32_t i = 0; i < c.cols; ++i) unscaled[i] = x[i] * normWeight[i];
            const auto used = rounds ? roundActivationsInt8(unscaled) : unscaled;
            for (std::uint32_t r = 0; r < c.rows; ++r) {
                double sum = 0, magnitude = 0, unrounded = 0;
                for (std::uint32_t i = 0; i < c.cols; ++i) {
                    const double w = cpuWeights[std::size_t(r) * c.cols + i];
                    sum += w * used[i] * scale;
                    unrounded += w * unscaled[i] * scale;
                    magnitude += std::abs(w * used[i] * scale);
                }
                if (c.bias) sum += bias[r];
                if (c.residual) sum += previous[std::size_t(t) * c.rows + r];
                expectedProbe[r] = std::max<float>(expectedProbe[r], float(std::abs(sum)));
                const float got = gpu[std::size_t(t) * c.rows + r];
                const double tolerance = 1e-5 * (magnitude + std::abs(sum)) + 1e-6;
                // The rounding must show: a kernel that kept float activations fails.
                if (std::abs(unrounded - sum) > 10 * tolerance) ++roundingVisible_;
                if (std::abs(got - sum) > tolerance) {
                    QFAIL(qPrintable(
                        QString("matvec rows=%1 cols=%2 tokens=%3 %4: token %5 row %6 "
                                "gpu %7 cpu %8")
                            .arg(c.rows)
                            .arg(c.cols)
                            .arg(c.tokens)
                            .arg(QString::fromStdString(std::string(weightFormatName(c.format))))
                            .arg(t)
                            .arg(r)
                            .arg(got)
                            .arg(sum)));
                }
            }
        }
        if (c.probe && c.residual) {
            for (std::uint32_t r = 0; r < c.rows; ++r) {
                QVERIFY2(std::abs(probe[probeBase + r] - expectedProbe[r]) <=
                             1e-4f * (1 + expectedProbe[r]),
                         qPrintable(QString("probe row %1: %2 vs %3")
                                        .arg(r)
                                        .arg(probe[probeBase + r])
                                        .arg(expectedProbe[r])));
            }
            for (std::uint32_t i = 0; i < probeBase; ++i) QCOMPARE(probe[i], 0.0f);
        }
    }

private slots:
    void initTestCase() {
        context_ = std::make_unique<VulkanContext>();
        // The device's own variant, plus the GPU-style layouts forced on this device: lanes
        // splitting rows over two subgroups (cross-subgroup sums), and shared-memory sums.
        const auto native = KernelTuning::forDevice(context_->info());
        variants_.push_back(std::make_unique<Kernels>(*context_, native));
        auto plainRows = native;
        plainRows.broadcastInput = false;
        variants_.push_back(std::make_unique<Kernels>(*context_, plainRows));
        auto split = native;
        split.splitColumns = true;
        split.workgroup = 2 * std::max(1u, context_->info().subgroupSize);
        split.decodeSlots = split.prefillSlots = 3;
        split.prefillTokens = 5;
        variants_.push_back(std::make_unique<Kernels>(*context_, split));
        auto shared = split;
        shared.subgroupReduce = false;
        shared.workgroup = 16;
        shared.attentionWorkgroup = 16;
        variants_.push_back(std::make_unique<Kernels>(*context_, shared));
        recorder_ = std::make_unique<CommandRecorder>(*context_);
        qInfo("device: %s (%s), subgroup %u, validation %s", context_->info().name.c_str(),
              context_->info().type.c_str(), context_->info().subgroupSize,
              context_->validationEnabled() ? "on" : "off");
    }

    void matvecPlain() {
        for (auto& variant : variants_) {
            matvecPlainFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void matvecPlainFor(Kernels* variant) {
        kernels_ = variant;
        std::uint32_t seed = 10;
        for (auto format : {WeightFormat::F32, WeightFormat::F16, WeightFormat::Q8_0}) {
            for (std::uint32_t cols : columnSizes()) {
                for (std::uint32_t rows : {1u, 33u, 130u}) {
                    for (std::uint32_t tokens : {1u, 3u, 6u, 21u}) {
                        runMatvec({rows, cols, tokens, format, false, false, false, false, false},
                                  seed++);
                    }
                }
            }
        }
    }

    // INT8_ACTIVATIONS (EngineOptions::int8Activations): every format that takes it
    // (WeightFormatInfo::int8ActivationPath), the others refused,
    // decode (1 token) and the prefill tile, with and without the folded norm,
    // against the CPU sum over the rounded activations.
    void matvecInt8Activations() {
        auto tuning = variants_.front()->tuning();
        tuning.int8Activations = true;
        Kernels rounding(*context_, tuning);
        const std::vector<float> probeRow(64, 1.0f);
        auto probe = uploadMatrix(*context_, probeRow, 1, 64, WeightFormat::Q4_1, "probe");
        if (!rounding.roundsActivations(probe))
            QSKIP("this device's kernels have no 8-lane broadcast path (int8 activations are "
                  "for lavapipe on 256-bit vectors)");
        kernels_ = &rounding;
        std::uint32_t seed = 700;
        // Every format the table marks, so a format added there is checked here; each must
        // show its rounding (a kernel that kept float activations for it fails).
        for (const auto& info : weightFormatTable()) {
            if (info.packer == WeightPacker::PerMatrix) continue;
            const std::uint32_t cols = 576;
            const std::vector<float> one(std::size_t(64) * cols, 0.5f);
            const bool marked = info.int8ActivationPath;
            QCOMPARE(rounding.roundsActivations(
                         uploadMatrix(*context_, one, 64, cols, info.format, "check")),
                     marked);
            if (!marked) continue;
            roundingVisible_ = 0;
            for (std::uint32_t tokens : {1u, 21u}) {
                runMatvec({64, cols, tokens, info.format, false, false, false, false, false},
                          seed++);
                runMatvec({33, cols, tokens, info.format, true, true, true, false, true}, seed++);
                if (QTest::currentTestFailed()) return;
            }
            QVERIFY2(roundingVisible_ > 0,
                     qPrintable(QString("no %1 result showed the activations' rounding")
                                    .arg(QString::fromStdString(std::string(info.name)))));
        }
        // Without the option nothing rounds.
        QVERIFY(!variants_.front()->roundsActivations(probe));
    }

    // Two functions, the CPU-style row layouts (variants 0-1) and the GPU-style split layouts
    // (2-3): each compiles many pipeline variants, and CTest runs them as separate parts
    // (tests/CMakeLists.txt) so that a cold shader cache stays within one part's limit.
    void matvecNormBiasResidualProbeRowLayouts() {
        for (std::size_t v = 0; v < 2; ++v) {
            matvecNormBiasResidualProbeFor(variants_[v].get());
            if (QTest::currentTestFailed()) return;
        }
    }
    void matvecNormBiasResidualProbeSplitLayouts() {
        for (std::size_t v = 2; v < variants_.size(); ++v) {
            matvecNormBiasResidualProbeFor(variants_[v].get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void matvecNormBiasResidualProbeFor(Kernels* variant) {
        kernels_ = variant;
        std::uint32_t seed = 100;
        for (auto format : {WeightFormat::F32, WeightFormat::F16, WeightFormat::Q8_0}) {
            for (std::uint32_t cols : columnSizes()) {
                for (std::uint32_t tokens : {1u, 4u, 21u}) {
                    runMatvec({33, cols, tokens, format, true, true, true, false, true}, seed++);
                    runMatvec({7, cols, tokens, format, true, false, false, true, false}, seed++);
                }
            }
        }
    }

    void qkvRopeBothPairings() {
        for (auto& variant : variants_) {
            qkvRopeBothPairingsFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void qkvRopeBothPairingsFor(Kernels* variant) {
        kernels_ = variant;
        const std::uint32_t heads = 4, kvHeads = 2, headDim = 8, blockSize = 4, maxBlocks = 160;
        const std::uint32_t rows = (heads + 2 * kvHeads) * headDim;
        const auto rope = ropeTable(headDim, 10000.0f);
        auto ropeBuffer = uploadVector(*context_, rope.invFrequency, "rope");
        // Two sequences; a block table that is not the identity.
        std::vector<std::uint32_t> tables(2 * maxBlocks);
        for (std::uint32_t i = 0; i < 2 * maxBlocks; ++i)
            tables[i] = (i * 37 + 11) % (2 * maxBlocks);
        auto tablesBuffer = deviceArray(tables, "tables");
        const std::vector<TokenInfo> tokens = {{0, 0}, {0, 1}, {1, 7}, {1, 33}, {0, 577}};
        auto tokenBuffer = deviceArray(tokens, "tokens");
        const std::uint32_t kvElements = 2 * maxBlocks * 2 * kvHeads * blockSize * headDim;
        std::uint32_t seed = 300;
        for (auto format : {WeightFormat::F32, WeightFormat::F16, WeightFormat::Q8_0}) {
            for (bool splitHalf : {false, true}) {
                for (std::uint32_t cols : {7u, 33u}) {
                    const std::uint32_t stride = paddedColumns(cols);
                    const std::uint32_t n = std::uint32_t(tokens.size());
                    auto weights = randomValues(std::size_t(rows) * cols, seed++);
                    weights = roundTripWeights(weights, cols, format);
                    auto input = randomValues(std::size_t(n) * cols, seed++);
                    auto norm = randomValues(cols, seed++);
                    auto bias = randomValues(rows, seed++);
                    auto matrix = uploadMatrix(*context_, weights, rows, cols, format, "Wqkv");
                    auto inputBuffer = deviceVector(padRows(input, n, cols, stride), "x");
                    auto normBuffer = uploadVector(*context_, norm, "norm");
                    auto biasBuffer = uploadVector(*context_, bias, "bias");
                    auto queries = deviceVector(std::vector<float>(n * heads * headDim), "q");
                    Buffer cache(*context_, kvElements * 2, BufferKind::DeviceLocal, "kv");
                    cache.fillZero();

                    QkvRopeArgs args;
                    args.weights = &matrix;
                    args.input = &inputBuffer;
                    args.inputStride = stride;
                    args.queries = &queries;
                    args.queryStride = heads * headDim;
                    args.tokens = n;
                    args.normWeight = &normBuffer;
                    args.bias = &biasBuffer;
                    args.ropeInvFrequency = &ropeBuffer;
                    args.splitHalf = splitHalf;
                    args.heads = heads;
                    args.kvHeads = kvHeads;
                    args.headDim = headDim;
                    args.kv = {&cache, &tokenBuffer, &tablesBuffer, blockSize, maxBlocks};
                    recorder_->begin();
                    kernels_->qkvRope(*recorder_, args, "qkv");
                    recorder_->submitAndWait();
                    const auto q = queries.read<float>(n * heads * headDim);
                    const auto kvHalves = cache.read<std::uint16_t>(kvElements);

                    for (std::uint32_t t = 0; t < n; ++t) {
                        const float* x = input.data() + std::size_t(t) * cols;
                        double squares = 0;
                        for (std::uint32_t i = 0; i < cols; ++i) squares += double(x[i]) * x[i];
                        const double scale = 1.0 / std::sqrt(squares / cols + 1e-5);
                        std::vector<double> out(rows), magnitude(rows);
                        for (std::uint32_t r = 0; r < rows; ++r) {
                            for (std::uint32_t i = 0; i < cols; ++i) {
                                const double term =
                                    weights[std::size_t(r) * cols + i] * x[i] * scale * norm[i];
                                out[r] += term;
                                magnitude[r] += std::abs(term);
                            }
                            out[r] += bias[r];
                        }
                        // RoPE on the Q and K heads, the pairing chosen.
                        for (std::uint32_t h = 0; h < heads + kvHeads; ++h) {
                            for (std::uint32_t j = 0; j < headDim / 2; ++j) {
                                const std::uint32_t a = h * headDim + (splitHalf ? j : 2 * j);
                                const std::uint32_t b = splitHalf ? a + headDim / 2 : a + 1;
                                const double angle =
                                    double(tokens[t].position) * double(rope.invFrequency[j]);
                                const double x0 = out[a], x1 = out[b];
                                out[a] = x0 * std::cos(angle) - x1 * std::sin(angle);
                                out[b] = x0 * std::sin(angle) + x1 * std::cos(angle);
                                const double m = std::max(magnitude[a], magnitude[b]);
                                magnitude[a] = magnitude[b] = m;
                            }
                        }
                        for (std::uint32_t r = 0; r < rows; ++r) {
                            const std::uint32_t head = r / headDim, dim = r % headDim;
                            float got;
                            double tolerance = 2e-5 * (magnitude[r] + 1.0) +
                                               // the angle pos * f rounded to f32
                                               1e-6 * tokens[t].position * (magnitude[r] + 1.0);
                            if (head < heads) {
                                got = q[t * heads * headDim + r];
                            } else {
                                const bool isKey = head < heads + kvHeads;
                                const std::uint32_t g = head - heads - (isKey ? 0 : kvHeads);
                                const std::uint32_t block = tables[tokens[t].sequence * maxBlocks +
                                                                   tokens[t].position / blockSize];
                                const auto index = kvCacheElement(
                                    block, isKey ? 0 : 1, g, tokens[t].position % blockSize, dim,
                                    kvHeads, 2 * maxBlocks, blockSize, headDim);
                                got = models::halfToFloat(kvHalves[index]);
                                tolerance += 1e-3 * std::abs(out[r]);
                            }
                            QVERIFY2(std::abs(got - out[r]) <= tolerance,
                                     qPrintable(QString("qkv %1 %2 cols %3 token %4 row %5: gpu "
                                                        "%6 cpu %7")
                                                    .arg(splitHalf ? "split-half" : "adjacent")
                                                    .arg(QString::fromStdString(
                                                        std::string(weightFormatName(format))))
                                                    .arg(cols)
                                                    .arg(t)
                                                    .arg(r)
                                                    .arg(got)
                                                    .arg(out[r])));
                        }
                    }
                }
            }
        }
    }

    void ffnGateUpSwiGlu() {
        for (auto& variant : variants_) {
            ffnGateUpSwiGluFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void ffnGateUpSwiGluFor(Kernels* variant) {
        kernels_ = variant;
        std::uint32_t seed = 500;
        for (auto format : {WeightFormat::F32, WeightFormat::F16, WeightFormat::Q8_0}) {
            for (std::uint32_t cols : columnSizes()) {
                for (std::uint32_t ffn : {1u, 33u}) {
                    for (std::uint32_t n : {1u, 6u, 21u}) {
                        const std::uint32_t stride = paddedColumns(cols);
                        auto weights = randomValues(std::size_t(2 * ffn) * cols, seed++);
                        weights = roundTripWeights(weights, cols, format);
                        auto input = randomValues(std::size_t(n) * cols, seed++);
                        auto norm = randomValues(cols, seed++);
                        auto matrix =
                            uploadMatrix(*context_, weights, 2 * ffn, cols, format, "Wgu");
                        auto inputBuffer = deviceVector(padRows(input, n, cols, stride), "x");
                        auto normBuffer = uploadVector(*context_, norm, "norm");
                        auto out = deviceVector(std::vector<float>(n * ffn), "act");
                        GateUpArgs args;
                        args.weights = &matrix;
                        args.input = &inputBuffer;
                        args.inputStride = stride;
                        args.output = &out;
                        args.outputStride = ffn;
                        args.tokens = n;
                        args.normWeight = &normBuffer;
                        recorder_->begin();
                        kernels_->ffnGateUp(*recorder_, args, "gateup");
                        recorder_->submitAndWait();
                        const auto gpu = out.read<float>(n * ffn);
                        for (std::uint32_t t = 0; t < n; ++t) {
                            const float* x = input.data() + std::size_t(t) * cols;
                            double squares = 0;
                            for (std::uint32_t i = 0; i < cols; ++i) squares += double(x[i]) * x[i];
                            const double scale = 1.0 / std::sqrt(squares / cols + 1e-5);
                            for (std::uint32_t i = 0; i < ffn; ++i) {
                                double g = 0, u = 0, mg = 0, mu = 0;
                                for (std::uint32_t k = 0; k < cols; ++k) {
                                    const double xk = x[k] * scale * norm[k];
                                    g += weights[std::size_t(i) * cols + k] * xk;
                                    u += weights[std::size_t(i + ffn) * cols + k] * xk;
                                    mg += std::abs(weights[std::size_t(i) * cols + k] * xk);
                                    mu += std::abs(weights[std::size_t(i + ffn) * cols + k] * xk);
                                }
                                const double silu = g / (1 + std::exp(-g));
                                const double expected = silu * u;
                                const double tolerance = 1.1 * 1e-5 * (mg + 1) * std::abs(u) +
                                                         std::abs(silu) * 1e-5 * (mu + 1) + 1e-6;
                                QVERIFY2(std::abs(gpu[t * ffn + i] - expected) <= tolerance,
                                         qPrintable(QString("gateup cols %1 ffn %2 token %3 row "
                                                            "%4: %5 vs %6")
                                                        .arg(cols)
                                                        .arg(ffn)
                                                        .arg(t)
                                                        .arg(i)
                                                        .arg(gpu[t * ffn + i])
                                                        .arg(expected)));
                            }
                        }
                    }
                }
            }
        }
    }

    void attentionPagedCausalGqa() {
        for (auto& variant : variants_) {
            attentionPagedCausalGqaFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void attentionPagedCausalGqaFor(Kernels* variant) {
        kernels_ = variant;
        const std::uint32_t blockSize = 16;
        for (std::uint32_t headDim : {8u, 64u}) {
            const std::uint32_t heads = 6, kvHeads = 2, group = heads / kvHeads;
            // Sequence lengths include 1, 7, 33 and 600 (any context length).
            const std::vector<std::uint32_t> lengths = {1, 7, 33, 600};
            const std::uint32_t maxBlocks = 40;
            const std::uint32_t totalBlocks = std::uint32_t(lengths.size()) * maxBlocks;
            std::vector<std::uint32_t> tables(totalBlocks);
            // Interleave the sequences' blocks so a wrong table lookup reads another's data.
            for (std::uint32_t s = 0; s < lengths.size(); ++s) {
                for (std::uint32_t b = 0; b < maxBlocks; ++b) {
                    tables[s * maxBlocks + b] =
                        (b * std::uint32_t(lengths.size()) + s) % totalBlocks;
                }
            }
            const std::uint32_t kvElements = totalBlocks * 2 * kvHeads * blockSize * headDim;
            auto kvValues = randomValues(kvElements, 900 + headDim, 2.0f);
            std::vector<std::uint16_t> kvHalves(kvElements);
            for (std::uint32_t i = 0; i < kvElements; ++i) {
                kvHalves[i] = models::floatToHalf(kvValues[i]);
                kvValues[i] = models::halfToFloat(kvHalves[i]);
            }
            // Tokens: every position of short sequences (prefill), a few of the long one.
            std::vector<TokenInfo> tokens;
            for (std::uint32_t s = 0; s < lengths.size(); ++s) {
                const std::uint32_t first = lengths[s] > 40 ? lengths[s] - 3 : 0;
                for (std::uint32_t p = first; p < lengths[s]; ++p) tokens.push_back({s, p});
            }
            const std::uint32_t n = std::uint32_t(tokens.size());
            const std::uint32_t qStride = heads * headDim;
            auto q = randomValues(std::size_t(n) * qStride, 77 + headDim, 2.0f);
            Buffer cache(*context_, kvElements * 2, BufferKind::DeviceLocal, "kv");
            cache.upload(std::span<const std::uint16_t>(kvHalves));
            auto qBuffer = deviceVector(q, "q");
            auto out = deviceVector(std::vector<float>(std::size_t(n) * qStride), "out");
            auto tokenBuffer = deviceArray(tokens, "tokens");
            auto tablesBuffer = deviceArray(tables, "tables");
            AttentionArgs args;
            args.queries = &qBuffer;
            args.queryStride = qStride;
            args.output = &out;
            args.outputStride = qStride;
            args.tokens = n;
            args.heads = heads;
            args.kvHeads = kvHeads;
            args.headDim = headDim;
            args.kv = {&cache, &tokenBuffer, &tablesBuffer, blockSize, maxBlocks};
            recorder_->begin();
            kernels_->attention(*recorder_, args, "attention");
            recorder_->submitAndWait();
            const auto gpu = out.read<float>(std::size_t(n) * qStride);

            auto at = [&](std::uint32_t seq, std::uint32_t pos, std::uint32_t kind, std::uint32_t g,
                          std::uint32_t d) {
                const std::uint32_t block = tables[seq * maxBlocks + pos / blockSize];
                return kvValues[kvCacheElement(block, kind, g, pos % blockSize, d, kvHeads,
                                               totalBlocks, blockSize, headDim)];
            };
            for (std::uint32_t t = 0; t < n; ++t) {
                for (std::uint32_t h = 0; h < heads; ++h) {
                    const std::uint32_t g = h / group;
                    std::vector<double> scores(tokens[t].position + 1);
                    double best = -1e300;
                    for (std::uint32_t p = 0; p <= tokens[t].position; ++p) {
                        double s = 0;
                        for (std::uint32_t d = 0; d < headDim; ++d) {
                            s += q[t * qStride + h * headDim + d] *
                                 at(tokens[t].sequence, p, 0, g, d);
                        }
                        scores[p] = s / std::sqrt(double(headDim));
                        best = std::max(best, scores[p]);
                    }
                    double total = 0;
                    for (auto& s : scores) total += (s = std::exp(s - best));
                    for (std::uint32_t d = 0; d < headDim; ++d) {
                        double expected = 0;
                        for (std::uint32_t p = 0; p <= tokens[t].position; ++p) {
                            expected += scores[p] / total * at(tokens[t].sequence, p, 1, g, d);
                        }
                        const float got = gpu[t * qStride + h * headDim + d];
                        QVERIFY2(std::abs(got - expected) <= 1e-4,
                                 qPrintable(QString("attention d=%1 token %2 (pos %3) head %4 "
                                                    "dim %5: %6 vs %7")
                                                .arg(headDim)
                                                .arg(t)
                                                .arg(tokens[t].position)
                                                .arg(h)
                                                .arg(d)
                                                .arg(got)
                                                .arg(expected)));
                    }
                }
            }
        }
    }

    // Attention fused into qkv_rope (decode steps on CPU devices) against the two separate
    // dispatches on the same inputs: the same shader code attends in both, so Q, the cache
    // and the attention output must agree exactly; the arrival counters must be zero after
    // the dispatch, so a second fused dispatch gives the same result again. A matrix in two
    // chunks (as a file whose V is stored in another type than Q and K) attends in its last
    // chunk's dispatch, after the first chunk's plain one, with the same results.
    void qkvRopeFusedAttention() {
        Kernels& native = *variants_.front();
        for (std::size_t v = 1; v < variants_.size(); ++v) {
            // The GPU layouts and the plain row layout keep attention separate.
            QVERIFY(!variants_[v]->fusesAttention(6, 2, 64));
        }
        if (!native.fusesAttention(6, 2, 64)) {
            QVERIFY(context_->info().type != "cpu"); // CPU devices fuse
            QSKIP("this device keeps attention in a dispatch of its own");
        }
        kernels_ = &native;
        struct Shape {
            std::uint32_t heads, kvHeads, headDim;
        };
        // One head per row group (64 rows), a head over two row groups, one kv head (MQA).
        const std::vector<Shape> shapes = {{9, 3, 64}, {4, 2, 128}, {4, 1, 64}};
        std::uint32_t seed = 4000;
        for (const auto& shape : shapes) {
            QVERIFY(native.fusesAttention(shape.heads, shape.kvHeads, shape.headDim));
            for (auto format : {WeightFormat::F32, WeightFormat::Q4_1}) {
                // 1 token, 3 (one token group), 21 (two token groups of the prefill tile).
                for (std::uint32_t n : {1u, 3u, 21u}) {
                    // Whole; V apart (as Q4_K_M files store V in Q8_0 on some layers);
                    // for the prefill tile also K and V apart, and a cut inside the Q heads.
                    const std::uint32_t d = shape.headDim;
                    std::vector<std::uint32_t> splits = {0u, (shape.heads + shape.kvHeads) * d};
                    if (n == 21) splits.insert(splits.end(), {shape.heads * d, d});
                    for (std::uint32_t split : splits) {
                        runFusedAttentionCase(shape.heads, shape.kvHeads, shape.headDim, format, n,
                                              seed++, split);
                        if (QTest::currentTestFailed()) return;
                    }
                }
            }
        }
    }
    // splitRow: 0 for one chunk, else the first row of the matrix's second chunk.
    void runFusedAttentionCase(std::uint32_t heads, std::uint32_t kvHeads, std::uint32_t headDim,
                               WeightFormat format, std::uint32_t n, std::uint32_t seed,
                               std::uint32_t splitRow) {
        const std::uint32_t cols = 96, stride = paddedColumns(cols), blockSize = 16;
        const std::uint32_t maxBlocks = 8, rows = (heads + 2 * kvHeads) * headDim;
        const std::uint32_t qStride = heads * headDim;
        const auto rope = ropeTable(headDim, 10000.0f);
        auto ropeBuffer = uploadVector(*context_, rope.invFrequency, "rope");
        // n sequences, one new token each, at positions 0 ... 100 (several chunks of 8).
        std::vector<TokenInfo> tokens(n);
        std::vector<std::uint32_t> tables(std::size_t(n) * maxBlocks);
        for (std::uint32_t t = 0; t < n; ++t) {
            tokens[t] = {t, (t * 37 + seed) % 101};
            for (std::uint32_t b = 0; b < maxBlocks; ++b)
                tables[t * maxBlocks + b] = (b * n + (n - 1 - t)) % (n * maxBlocks);
        }
        auto tokenBuffer = deviceArray(tokens, "tokens");
        auto tablesBuffer = deviceArray(tables, "tables");
        const std::uint32_t kvElements = n * maxBlocks * 2 * kvHeads * blockSize * headDim;
        const auto cacheValues = randomValues(kvElements, seed, 2.0f);
        std::vector<std::uint16_t> cacheHalves(kvElements);
        for (std::uint32_t i = 0; i < kvElements; ++i)
            cacheHalves[i] = models::floatToHalf(cacheValues[i]);
        const auto weights = randomValues(std::size_t(rows) * cols, seed + 1);
        auto matrix = uploadMatrix(*context_, weights, rows, cols, format, "Wqkv");
        // The same rows as two matrices: [0, splitRow) and [splitRow, rows).
        const std::span<const float> allWeights(weights);
        std::optional<DeviceMatrix> firstChunk, lastChunk;
        if (splitRow != 0) {
            firstChunk = uploadMatrix(*context_, allWeights.first(std::size_t(splitRow) * cols),
                                      splitRow, cols, format, "Wqkv first chunk");
            lastChunk = uploadMatrix(*context_, allWeights.subspan(std::size_t(splitRow) * cols),
                                     rows - splitRow, cols, format, "Wqkv last chunk");
        }
        auto input = deviceVector(
            padRows(randomValues(std::size_t(n) * cols, seed + 2, 2.0f), n, cols, stride), "x");
        auto norm = uploadVector(*context_, randomValues(cols, seed + 3), "norm");

        struct Run {
            std::vector<float> queries, attention;
            std::vector<std::uint16_t> cache;
            std::vector<std::uint32_t> arrivals;
        };
        Buffer arrivals(*context_, Kernels::arrivalWords(kvHeads, n) * 4, BufferKind::DeviceLocal,
                        "arrivals");
        arrivals.fillZero();
        auto run = [&](bool fused) {
            Buffer cache(*context_, kvElements * 2, BufferKind::DeviceLocal, "kv");
            cache.upload(std::span<const std::uint16_t>(cacheHalves));
            auto queries = deviceVector(std::vector<float>(n * qStride), "q");
            auto out = deviceVector(std::vector<float>(n * qStride), "attention");
            QkvRopeArgs args;
            args.weights = &matrix;
            args.input = &input;
            args.inputStride = stride;
            args.queries = &queries;
            args.queryStride = qStride;
            args.tokens = n;
            args.normWeight = &norm;
            args.ropeInvFrequency = &ropeBuffer;
            args.splitHalf = true;
            args.heads = heads;
            args.kvHeads = kvHeads;
            args.headDim = headDim;
            args.kv = {&cache, &tokenBuffer, &tablesBuffer, blockSize, maxBlocks};
            if (fused) {
                args.attentionOutput = &out;
                args.attentionOutputStride = qStride;
                args.arrivals = &arrivals;
            }
            recorder_->begin();
            if (fused && lastChunk) {
                QkvRopeArgs first = args;
                first.weights = &*firstChunk;
                first.attentionOutput = nullptr;
                first.arrivals = nullptr;
                kernels_->qkvRope(*recorder_, first, "qkv first chunk");
                args.weights = &*lastChunk;
                args.firstRow = splitRow;
                kernels_->qkvRope(*recorder_, args, "qkv last chunk");
            } else {
                kernels_->qkvRope(*recorder_, args, "qkv");
            }
            if (!fused) {
                AttentionArgs attention;
                attention.queries = &queries;
                attention.queryStride = qStride;
                attention.output = &out;
                attention.outputStride = qStride;
                attention.tokens = n;
                attention.heads = heads;
                attention.kvHeads = kvHeads;
                attention.headDim = headDim;
                attention.kv = args.kv;
                kernels_->attention(*recorder_, attention, "attention");
            }
            recorder_->submitAndWait();
            return Run{queries.read<float>(n * qStride), out.read<float>(n * qStride),
                       cache.read<std::uint16_t>(kvElements),
                       arrivals.read<std::uint32_t>(Kernels::arrivalWords(kvHeads, n))};
        };
        const auto separate = run(false);
        for (int repeat = 0; repeat < 2; ++repeat) {
            const auto fused = run(true);
            const QString what =
                QString("heads %1/%2 dim %3 %4 tokens %5 split at row %6 run %7")
                    .arg(heads)
                    .arg(kvHeads)
                    .arg(headDim)
                    .arg(QString::fromStdString(std::string(weightFormatInfo(format).name)))
                    .arg(n)
                    .arg(splitRow)
                    .arg(repeat);
            QVERIFY2(fused.queries == separate.queries, qPrintable("queries, " + what));
            QVERIFY2(fused.cache == separate.cache, qPrintable("kv cache, " + what));
            for (std::size_t i = 0; i < fused.attention.size(); ++i) {
                QVERIFY2(fused.attention[i] == separate.attention[i],
                         qPrintable(QString("attention[%1] %2 vs %3, ")
                                        .arg(i)
                                        .arg(fused.attention[i])
                                        .arg(separate.attention[i]) +
                                    what));
            }
            for (auto count : fused.arrivals)
                QVERIFY2(count == 0, qPrintable("arrival counter left set, " + what));
        }
        // The separate run attended over real values (not a zero buffer both sides share).
        QVERIFY(std::any_of(separate.attention.begin(), separate.attention.end(),
                            [](float v) { return v != 0.0f; }));
    }

    void embeddingLookup() {
        for (auto& variant : variants_) {
            embeddingLookupFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void embeddingLookupFor(Kernels* variant) {
        kernels_ = variant;
        // Both code orders (compute/formats/DeviceCodeLayout.hpp): row-major, and 64 rows
        // interleaved in two blocks of 32.
        for (auto format : {WeightFormat::F32, WeightFormat::F16})
            for (std::uint32_t rowBlock : {0u, kInterleavedRowBlock}) {
                for (std::uint32_t cols : {1u, 7u, 33u, 577u}) {
                    const std::uint32_t vocab = 64;
                    auto table = randomValues(std::size_t(vocab) * cols, cols);
                    auto matrix =
                        uploadMatrix(*context_, table, vocab, cols, format, "embd", rowBlock);
                    QCOMPARE(matrix.rowBlock, rowBlock);
                    const std::vector<std::uint32_t> ids = {3, 0, 8, 3, 5, 63, 40};
                    auto idBuffer = deviceArray(ids, "ids");
                    const std::uint32_t stride = paddedColumns(cols);
                    auto out = deviceVector(std::vector<float>(ids.size() * stride, -1.0f), "h");
                    recorder_->begin();
                    kernels_->embed(*recorder_, matrix, idBuffer, out, stride,
                                    std::uint32_t(ids.size()));
                    recorder_->submitAndWait();
                    const auto gpu = out.read<float>(ids.size() * stride);
                    for (std::size_t t = 0; t < ids.size(); ++t) {
                        for (std::uint32_t i = 0; i < stride; ++i) {
                            float expected = i < cols ? table[ids[t] * cols + i] : 0.0f;
                            if (format == WeightFormat::F16) expected = roundHalf(expected);
                            QCOMPARE(gpu[t * stride + i], expected);
                        }
                    }
                }
            }
    }

    void argmaxRows() {
        for (auto& variant : variants_) {
            argmaxRowsFor(variant.get());
            if (QTest::currentTestFailed()) return;
        }
    }
    // Takes the variant, so QtTest does not run it as a test function of its own.
    void argmaxRowsFor(Kernels* variant) {
        kernels_ = variant;
        // Rows as long as they are (storage reads where not a multiple of 4), and padded to
        // a multiple of 4 (texels, with 1-3 columns left over), padding larger than any logit.
        for (std::uint32_t cols : {1u, 7u, 33u, 577u, 49152u}) {
            for (std::uint32_t stride : {cols, (cols + 3) / 4 * 4}) {
                const std::uint32_t rows = 3;
                auto logits = randomValues(std::size_t(rows) * stride, cols + 1);
                for (std::uint32_t r = 0; r < rows; ++r)
                    for (std::uint32_t i = cols; i < stride; ++i) logits[r * stride + i] = 100.0f;
                // Row 1: a tie at the maximum; the lower index must win.
                if (cols > 5) {
                    logits[stride + 2] = 5.0f;
                    logits[stride + cols - 1] = 5.0f;
                }
                auto buffer = deviceVector(logits, "logits");
                auto result = deviceArray(std::vector<std::uint32_t>(rows, 12345), "argmax");
                recorder_->begin();
                kernels_->argmax(*recorder_, buffer, cols, stride, rows, result);
                recorder_->submitAndWait();
                const auto gpu = result.read<std::uint32_t>(rows);
                for (std::uint32_t r = 0; r < rows; ++r) {
                    const auto begin = logits.begin() + std::ptrdiff_t(r) * stride;
                    const auto expected =
                        std::uint32_t(std::max_element(begin, begin + cols) - begin);
                    QVERIFY2(gpu[r] == expected, qPrintable(QString("cols %1 stride %2 row %3: "
                                                                    "%4 vs %5")
                                                                .arg(cols)
                                                                .arg(stride)
                                                                .arg(r)
                                                                .arg(gpu[r])
                                                                .arg(expected)));
                }
            }
        }
    }

    void descriptorSetsAreCached() {
        // A second identical dispatch allocates nothing new.
        kernels_ = variants_.front().get();
        auto weights = randomValues(8 * 8, 1);
        auto matrix = uploadMatrix(*context_, weights, 8, 8, WeightFormat::F32, "W");
        auto x = deviceVector(randomValues(8, 2), "x");
        auto y = deviceVector(std::vector<float>(8), "y");
        const auto args = oneTokenArgs8x8(matrix, x, y);
        recorder_->begin();
        kernels_->matvec(*recorder_, args, "first");
        recorder_->submitAndWait();
        const auto pipelines = kernels_->pipelineCount();
        recorder_->begin(true);
        kernels_->matvec(*recorder_, args, "second");
        kernels_->matvec(*recorder_, args, "third");
        recorder_->submitAndWait();
        QCOMPARE(kernels_->pipelineCount(), pipelines);
        QCOMPARE(recorder_->dispatchCount(), 2u);
        if (context_->info().timestamps) {
            QCOMPARE(recorder_->timings().size(), std::size_t(2));
            QCOMPARE(QString::fromStdString(recorder_->timings()[1].label), QString("third"));
            QVERIFY(recorder_->timings()[0].microseconds >= 0.0);
        }
    }

    void descriptorSetsFollowReplacedBuffers() {
        // Buffers destroyed and created again between dispatches (a format switch re-uploads
        // every matrix): each dispatch reads the buffers it was given. A driver may hand a
        // new buffer a destroyed one's handle (lavapipe does), and a descriptor set cached
        // by handle then reads the destroyed buffer's texel views.
        kernels_ = variants_.front().get();
        auto x = deviceVector(randomValues(8, 2), "x");
        auto y = deviceVector(std::vector<float>(8), "y");
        const auto input = x.read<float>(8);
        for (std::uint32_t round = 0; round < 6; ++round) {
            const auto weights = randomValues(8 * 8, 50 + round);
            auto matrix = uploadMatrix(*context_, weights, 8, 8, WeightFormat::F32, "W");
            recorder_->begin();
            kernels_->matvec(*recorder_, oneTokenArgs8x8(matrix, x, y), "replaced");
            recorder_->submitAndWait();
            const auto got = y.read<float>(8);
            for (std::uint32_t r = 0; r < 8; ++r) {
                double expected = 0, magnitude = 0;
                for (std::uint32_t i = 0; i < 8; ++i) {
                    expected += double(weights[r * 8 + i]) * input[i];
                    magnitude += std::abs(double(weights[r * 8 + i]) * input[i]);
                }
                QVERIFY2(std::abs(got[r] - expected) <= 1e-5 * magnitude + 1e-6,
                         qPrintable(QString("round %1 row %2: %3 vs %4")
                                        .arg(round)
                                        .arg(r)
                                        .arg(got[r])
                                        .arg(expected)));
            }
        }
    }

    void cleanupTestCase() {
        recorder_.reset();
        variants_.clear();
        const auto messages = context_->validationLog().messages();
        for (const auto& m : messages) qWarning("%s", m.c_str());
        QCOMPARE(context_->validationLog().errors(), 0u);
        context_.reset();
    }
};

QTEST_APPLESS_MAIN(VulkanKernelsTest)
#include "test_vulkan_kernels.moc"
