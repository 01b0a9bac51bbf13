// Weight quantizers (models/quant/WeightQuantizer.hpp): round-trip error bounds read from the
// packed bytes themselves (so the documented layout is checked too), level counts, exact bits per
// weight, NF4 levels, the as-stored scheme, and the chapter's ordering of errors.
#include "models/formats/TensorType.hpp"
#include "models/quant/NormalFloat4.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <QtTest>

#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace inferscope::models;

namespace {

std::vector<float> gaussianMatrix(std::size_t n, std::uint32_t seed, float sigma = 0.02f) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<float> w(n);
    for (auto& x : w) x = normal(generator);
    return w;
}

double relativeError(std::span<const float> w, std::span<const float> approx) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        diff += double(w[i] - approx[i]) * (w[i] - approx[i]);
        norm += double(w[i]) * w[i];
    }
    return std::sqrt(diff / norm);
}

float scaleAt(const PackedMatrix& packed, std::uint64_t codeBytes, std::uint64_t index) {
    const std::uint8_t* p = packed.bytes.data() + codeBytes + 2 * index;
    return halfToFloat(std::uint16_t(p[0] | (p[1] << 8)));
}

// Codes as the layout comment says they are stored: int8 bytes, or nibbles (low first).
int codeAt(const PackedMatrix& packed, std::uint64_t e, bool fourBit) {
    if (!fourBit) return std::int8_t(packed.bytes[e]);
    const std::uint8_t byte = packed.bytes[e / 2];
    return e % 2 == 0 ? byte & 0x0f : byte >> 4;
}

} // namespace

class TestWeightQuantizer : public QObject {
    Q_OBJECT
private slots:
    void nf4LevelsMatchThePaper() {
        // Table of NF4 values as listed in the QLoRA paper's appendix E (Dettmers et al. 2023).
        const float published[16] = {-1.0f,
                                     -0.6961928009986877f,
                                     -0.5250730514526367f,
                                     -0.39491748809814453f,
                                     -0.28444138169288635f,
                                     -0.18477343022823334f,
                                     -0.09105003625154495f,
                                     0.0f,
                                     0.07958029955625534f,
                                     0.16093020141124725f,
                                     0.24611230194568634f,
                                     0.33791524171829224f,
                                     0.44070982933044434f,
                                     0.5626170039176941f,
                                     0.7229568362236023f,
                                     1.0f};
        const auto& levels = nf4Levels();
        for (int i = 0; i < 16; ++i)
            QVERIFY2(std::fabs(levels[i] - published[i]) < 2e-6f, qPrintable(QString::number(i)));
        for (int i = 1; i < 16; ++i) QVERIFY(levels[i] > levels[i - 1]);
        QCOMPARE(levels[0], -1.0f);
        QCOMPARE(levels[7], 0.0f);
        QCOMPARE(levels[15], 1.0f);
        // Symmetric-ish: 7 negative and 8 positive levels, so the positive side is denser,
        // but the mean level is still close to zero.
        double sum = 0;
        for (float l : levels) sum += l;
        QVERIFY(sum / 16 > 0.0 && sum / 16 < 0.03);
        for (int i = 0; i < 16; ++i) QCOMPARE(nearestNf4Level(levels[i]), i);
        QCOMPARE(nearestNf4Level(-5.0f), 0);
        QCOMPARE(nearestNf4Level(5.0f), 15);
        QCOMPARE(nearestNf4Level(0.5f * (levels[3] + levels[4])), 3); // a tie goes down
        QVERIFY(std::fabs(normalQuantile(0.975) - 1.959963984540054) < 1e-9);
    }

    void schemeNamesRoundTrip() {
        for (const auto& spec : standardQuantSchemes())
            QCOMPARE(parseQuantScheme(spec.name()), spec);
        QCOMPARE(parseQuantScheme("int4-group").groupSize, 128u);
        QCOMPARE(parseQuantScheme("nf4").groupSize, 64u);
        QCOMPARE(parseQuantScheme("int4-g32").groupSize, 32u);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseQuantScheme("int4-g0"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseQuantScheme("int4-g12x"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseQuantScheme("int3"));
    }

    void bitsPerWeightFromPackedBytes() {
        struct Case {
            const char* scheme;
            std::uint64_t rows, cols;
            double bits;
        };
        const Case cases[] = {
            {"fp32", 8, 64, 32.0},
            {"fp16", 8, 64, 16.0},
            {"int8-tensor", 64, 64, 8.0 + 16.0 / 4096},
            {"int8-row", 16, 64, 8.25},
            {"int4-tensor", 64, 576, 4.0 + 16.0 / (64 * 576)},
            {"int4-row", 32, 64, 4.25},
            {"int4-g128", 64, 576, 4.125}, // groups straddle rows: 576 is not a multiple of 128
            {"int4-g64", 16, 64, 4.25},
            {"nf4-b64", 64, 576, 4.25},
        };
        for (const auto& c : cases) {
            const auto spec = parseQuantScheme(c.scheme);
            const auto w = gaussianMatrix(c.rows * c.cols, 7);
            const auto packed = packMatrix(spec, w, c.rows, c.cols);
            QCOMPARE(packed.bytes.size(), packedByteCount(spec, c.rows, c.cols));
            QVERIFY2(packed.bitsPerWeight() == c.bits,
                     qPrintable(QString("%1: %2").arg(c.scheme).arg(packed.bitsPerWeight())));
            QVERIFY(!packed.layout.empty());
        }
    }

    void symmetricSchemesStayWithinHalfAScale() {
        // A matrix with a few large weights, as real ones have.
        const std::uint64_t rows = 48, cols = 200; // 200: groups of 128 straddle rows
        auto w = gaussianMatrix(rows * cols, 11);
        w[5] = 0.4f;
        w[3001] = -0.3f;
        const char* schemes[] = {"int8-tensor", "int8-row",  "int4-tensor",
                                 "int4-row",    "int4-g128", "int4-g64"};
        for (const char* name : schemes) {
            const auto spec = parseQuantScheme(name);
            const bool fourBit =
                spec.scheme != QuantScheme::Int8PerTensor && spec.scheme != QuantScheme::Int8PerRow;
            const int qmax = fourBit ? 7 : 127;
            const auto packed = packMatrix(spec, w, rows, cols);
            const auto back = dequantizeMatrix(packed);
            const std::uint64_t codeBytes = fourBit ? rows * cols / 2 : rows * cols;
            const std::uint64_t run = spec.scheme == QuantScheme::Int8PerTensor ||
                                              spec.scheme == QuantScheme::Int4PerTensor
                                          ? rows * cols
                                      : spec.groupSize ? spec.groupSize
                                                       : cols;
            std::set<int> used;
            std::map<std::uint64_t, int> largestCodePerRun;
            for (std::uint64_t e = 0; e < rows * cols; ++e) {
                const float scale = scaleAt(packed, codeBytes, e / run);
                QVERIFY(scale > 0);
                QVERIFY2(std::fabs(w[e] - back[e]) <= scale * 0.5f * (1 + 1e-6f),
                         qPrintable(QString("%1 element %2").arg(name).arg(e)));
                const int code = codeAt(packed, e, fourBit);
                const int q = fourBit ? code - 8 : code;
                QVERIFY(q >= -qmax && q <= qmax); // -8 / -128 never appear
                QCOMPARE(back[e], float(q) * scale);
                used.insert(q);
                largestCodePerRun[e / run] = std::max(largestCodePerRun[e / run], std::abs(q));
            }
            // The absmax of each run lands on the outermost level (the fp16 scale is rounded
            // up by less than a step, so round(absmax / scale) is still qmax).
            for (const auto& [index, largest] : largestCodePerRun) QCOMPARE(largest, qmax);
            QVERIFY(int(used.size()) <= 2 * qmax + 1);
        }
    }

    void perTensorInt4UsesFewLevelsWithAnOutlier() {
        // The chapter's collapse: one weight 24 sigma out sets the step for all of them,
        // so typical weights (|w| < 3 sigma) round to at most 3 levels: 3/24 * 7 < 1.
        const std::uint64_t rows = 64, cols = 64;
        auto w = gaussianMatrix(rows * cols, 3, 0.02f);
        for (auto& x : w) x = std::clamp(x, -0.06f, 0.06f);
        w[100] = 24 * 0.02f;
        const auto packed = packMatrix(parseQuantScheme("int4-tensor"), w, rows, cols);
        std::set<int> typical;
        for (std::uint64_t e = 0; e < rows * cols; ++e)
            if (e != 100) typical.insert(codeAt(packed, e, true));
        QVERIFY(typical.size() <= 3);
        const auto back = dequantizeMatrix(packed);
        QVERIFY(relativeError(w, back) > 0.5);
        // Per row fixes most of it, since only one row holds the outlier.
        const auto perRow =
            dequantizeMatrix(packMatrix(parseQuantScheme("int4-row"), w, rows, cols));
        QVERIFY(relativeError(w, perRow) < 0.2);
    }

    void granularityOrdersTheErrors() {
        // Rows with different magnitudes and scattered large weights: finer scales help.
        const std::uint64_t rows = 64, cols = 256;
        auto w = gaussianMatrix(rows * cols, 5);
        for (std::uint64_t r = 0; r < rows; ++r)
            for (std::uint64_t c = 0; c < cols; ++c) w[r * cols + c] *= 0.5f + float(r % 8) * 0.25f;
        for (std::uint64_t i = 0; i < 40; ++i) w[(i * 7919) % w.size()] *= 12.0f;
        auto error = [&](const char* scheme) {
            return relativeError(
                w, dequantizeMatrix(packMatrix(parseQuantScheme(scheme), w, rows, cols)));
        };
        const double tensor = error("int4-tensor"), row = error("int4-row"),
                     g128 = error("int4-g128"), g64 = error("int4-g64");
        QVERIFY2(tensor > row && row > g128 && g128 > g64,
                 qPrintable(QString("%1 %2 %3 %4").arg(tensor).arg(row).arg(g128).arg(g64)));
        QVERIFY(error("int8-tensor") < tensor / 10);
        QVERIFY(error("int8-row") < error("int8-tensor"));
        QVERIFY(error("fp16") < 1e-3);
        QCOMPARE(error("fp32"), 0.0);
    }

    void nf4BeatsUniformLevelsOnGaussianBlocks() {
        // Same block size (64), same 4 bits, same fp16 absmax per block: only the placement
        // of the levels differs, and normal-quantile levels win on normal weights.
        const std::uint64_t rows = 128, cols = 512;
        const auto w = gaussianMatrix(rows * cols, 9);
        const auto nf4 = packMatrix(parseQuantScheme("nf4-b64"), w, rows, cols);
        const auto g64 = packMatrix(parseQuantScheme("int4-g64"), w, rows, cols);
        QCOMPARE(nf4.bitsPerWeight(), g64.bitsPerWeight());
        const double nf4Error = relativeError(w, dequantizeMatrix(nf4));
        const double g64Error = relativeError(w, dequantizeMatrix(g64));
        QVERIFY2(nf4Error < 0.9 * g64Error,
                 qPrintable(QString("%1 vs %2").arg(nf4Error).arg(g64Error)));
        // Every NF4 weight is a level times its block's absmax, and within half the widest
        // gap between levels (the one next to -1 and 1) of the truth.
        const auto& levels = nf4Levels();
        float widestGap = 0;
        for (int i = 1; i < 16; ++i) widestGap = std::max(widestGap, levels[i] - levels[i - 1]);
        const auto back = dequantizeMatrix(nf4);
        const std::uint64_t codeBytes = rows * cols / 2;
        for (std::uint64_t e = 0; e < rows * cols; ++e) {
            const float absmax = scaleAt(nf4, codeBytes, e / 64);
            QCOMPARE(back[e], levels[codeAt(nf4, e, true)] * absmax);
            QVERIFY(std::fabs(back[e] - w[e]) <= 0.5f * widestGap * absmax * 1.0001f);
        }
    }

    void oddSizesAndEdgeCases() {
        // 3 x 5 = 15 elements: the last byte holds one code and a zero nibble (code 8).
        std::vector<float> w = {1, -2, 3, -4, 5, -6, 7, 0, 0.5f, 0.25f, -7, 6, -5, 4, -3};
        const auto packed = packMatrix(parseQuantScheme("int4-g4"), w, 3, 5);
        QCOMPARE(packed.bytes.size(), std::size_t(8 + 2 * 4));
        QCOMPARE(packed.bytes[7] >> 4, 8);
        const auto back = dequantizeMatrix(packed);
        for (std::size_t e = 0; e < w.size(); ++e) {
            const float scale = scaleAt(packed, 8, e / 4);
            QVERIFY(std::fabs(back[e] - w[e]) <= scale / 2);
        }
        // All-zero matrix: zero scales, exact zeros back.
        std::vector<float> zeros(64, 0.0f);
        for (const auto& spec : standardQuantSchemes()) {
            if (spec.scheme == QuantScheme::AsStored) continue;
            const auto back0 = dequantizeMatrix(packMatrix(spec, zeros, 4, 16));
            for (float x : back0) QCOMPARE(x, 0.0f);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 packMatrix(parseQuantScheme("as-stored"), zeros, 4, 16));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 packMatrix(parseQuantScheme("int8-row"), zeros, 4, 15));
        zeros[3] = std::nanf("");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 packMatrix(parseQuantScheme("int8-row"), zeros, 4, 16));
        std::vector<float> huge(4, 1e9f);
        QVERIFY_THROWS_EXCEPTION(std::range_error,
                                 packMatrix(parseQuantScheme("int8-tensor"), huge, 2, 2));
        // Rounding a scale up never goes below the value, and stays within one half step.
        for (float v : {1e-7f, 3e-5f, 0.0001234f, 0.37f, 1.0f, 1000.3f}) {
            const float up = halfToFloat(halfRoundedUp(v));
            QVERIFY(up >= v && up <= v * 1.001f + 6e-8f);
        }
    }

    void asStoredKeepsTheFilesBytes() {
        // Two Q8_0 blocks, two Q4_0 and two Q4_1 blocks built by hand: a 2 x 32 matrix each.
        struct Case {
            TensorType type;
            double bits;
        };
        for (const auto& c : {Case{TensorType::Q8_0, 8.5}, Case{TensorType::Q4_0, 4.5},
                              Case{TensorType::Q4_1, 5.0}, Case{TensorType::F16, 16.0}}) {
            const auto bytes = *tensorBytes(c.type, 64);
            std::vector<std::uint8_t> data(bytes);
            std::mt19937 generator(1);
            for (auto& b : data) b = std::uint8_t(generator());
            // Keep the fp16 block scales finite and modest: overwrite them with 0.01.
            const auto traits = tensorTypeTraits(c.type);
            const std::uint16_t small = floatToHalf(0.01f);
            for (std::size_t block = 0; block < bytes / traits.blockBytes; ++block) {
                std::uint8_t* p = data.data() + block * traits.blockBytes;
                const int halves = c.type == TensorType::Q4_1  ? 2
                                   : c.type == TensorType::F16 ? 0
                                                               : 1;
                for (int h = 0; h < halves; ++h) {
                    p[2 * h] = std::uint8_t(small & 0xff);
                    p[2 * h + 1] = std::uint8_t(small >> 8);
                }
            }
            if (c.type == TensorType::F16)
                for (std::size_t i = 0; i < 64; ++i) {
                    const std::uint16_t h = floatToHalf(float(i) * 0.125f - 3.0f);
                    data[2 * i] = std::uint8_t(h & 0xff);
                    data[2 * i + 1] = std::uint8_t(h >> 8);
                }
            StoredTensor tensor;
            tensor.name = "blk.0.attn_q.weight";
            tensor.type = c.type;
            tensor.shape = {32, 2};
            tensor.data = data;
            const auto packed = packStoredMatrix(tensor);
            QCOMPARE(packed.rows, 2u);
            QCOMPARE(packed.cols, 32u);
            QVERIFY(packed.bytes == data);
            QCOMPARE(packed.bitsPerWeight(), c.bits);
            std::vector<float> expected(64);
            dequantize(c.type, data, expected);
            QVERIFY(dequantizeMatrix(packed) == expected);
            const auto viaTensor = packTensor(parseQuantScheme("as-stored"), tensor, expected);
            QVERIFY(viaTensor.bytes == data);
            const auto int8 = packTensor(parseQuantScheme("int8-row"), tensor, expected);
            QCOMPARE(int8.bytes.size(), std::size_t(64 + 2 * 2));
        }
    }
};

QTEST_APPLESS_MAIN(TestWeightQuantizer)
#include "test_weight_quantizer.moc"
