// ggml's block quantizers (used to write synthetic GGUF files): exact bytes for hand-worked
// Q8_0 / Q4_0 / Q4_1 / Q5_0 blocks, including rounding ties, clamping and all-zero blocks;
// every other type round-trips random rows through the host decoder within its bound.
#include "models/ModelError.hpp"
#include "models/quant/GgmlQuantize.hpp"

#include <QtTest>

#include <cmath>
#include <random>

using namespace inferscope::models;
using Bytes = std::vector<std::uint8_t>;

class TestGgmlQuantize : public QObject {
    Q_OBJECT
private slots:
    void q8_0();
    void q8_0BlockQuantizer();
    void q4_0();
    void q4_1();
    void q5_0();
    void roundTripsEveryType_data();
    void roundTripsEveryType();
    void zeroBlocks();
    void refusesPartialBlocksAndOtherTypes();
};

void TestGgmlQuantize::q8_0() {
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f; // absmax: d = 1
    x[1] = -127.0f;
    x[2] = 63.5f; // a tie rounds away from zero, as roundf does
    x[3] = 0.49f;
    x[4] = -63.5f;
    const Bytes bytes = quantizeGgml(TensorType::Q8_0, x);
    QCOMPARE(bytes.size(), std::size_t{34});
    QCOMPARE(bytes[0], std::uint8_t{0x00}); // f16 1.0 = 0x3C00, little-endian
    QCOMPARE(bytes[1], std::uint8_t{0x3C});
    QCOMPARE(bytes[2], std::uint8_t{0x7F});
    QCOMPARE(bytes[3], std::uint8_t{0x81}); // -127
    QCOMPARE(bytes[4], std::uint8_t{64});
    QCOMPARE(bytes[5], std::uint8_t{0});
    QCOMPARE(bytes[6], std::uint8_t{0xC0}); // -64
    std::vector<float> back(32);
    dequantize(TensorType::Q8_0, bytes, back);
    QCOMPARE(back[2], 64.0f);
    QCOMPARE(back[1], -127.0f);
}

// The one Q8_0 block quantizer (GGUF writer, GPU q8_0 packer, host reference): a row's
// shorter tail block, the codes' range, and refusal of more than one block.
void TestGgmlQuantize::q8_0BlockQuantizer() {
    const std::vector<float> tail = {63.5f, -31.75f, 0.25f, 0.0f, -63.5f}; // scale 0.5
    std::vector<std::int8_t> codes(tail.size());
    const float scale = quantizeQ8_0Block(tail, codes);
    QCOMPARE(scale, 0.5f);
    for (std::size_t i = 0; i < tail.size(); ++i) {
        QVERIFY(codes[i] != -128); // symmetric: -128 has no positive twin
        QVERIFY(std::fabs(codes[i] * scale - tail[i]) <= scale / 2);
    }
    QCOMPARE(codes[0], std::int8_t{127});
    QCOMPARE(codes[4], std::int8_t{-127});
    QCOMPARE(codes[1], std::int8_t{-64}); // -63.5 rounds away from zero
    QCOMPARE(codes[2], std::int8_t{1});   // 0.5 too
    QCOMPARE(codes[3], std::int8_t{0});
    const std::vector<float> zeros(32, 0.0f);
    std::vector<std::int8_t> zeroCodes(32, 5);
    QCOMPARE(quantizeQ8_0Block(zeros, zeroCodes), 0.0f);
    QCOMPARE(zeroCodes, std::vector<std::int8_t>(32, 0));
    // GGUF's block holds the same codes with the scale rounded to fp16.
    std::vector<float> block(32, 0.25f);
    block[9] = -3.0f;
    std::vector<std::int8_t> blockCodes(32);
    const float blockScale = quantizeQ8_0Block(block, blockCodes);
    const Bytes bytes = quantizeGgml(TensorType::Q8_0, block);
    QCOMPARE(std::uint16_t(bytes[0] | (bytes[1] << 8)), floatToHalf(blockScale));
    for (std::size_t i = 0; i < 32; ++i) QCOMPARE(std::int8_t(bytes[2 + i]), blockCodes[i]);
    std::vector<float> tooMany(33, 1.0f);
    std::vector<std::int8_t> tooManyCodes(33);
    QVERIFY_THROWS_EXCEPTION(ModelError, quantizeQ8_0Block(tooMany, tooManyCodes));
}

void TestGgmlQuantize::q4_0() {
    std::vector<float> x(32, 0.0f);
    x[0] = -8.0f;  // largest magnitude, negative: d = -8 / -8 = 1
    x[1] = 7.0f;   // 15.5 -> 15
    x[2] = 0.4f;   // 8.9 -> 8
    x[3] = 0.6f;   // 9.1 -> 9
    x[16] = 7.9f;  // 16.4 -> 16, clamped to 15
    x[17] = -7.6f; // 0.9 -> 0
    const Bytes bytes = quantizeGgml(TensorType::Q4_0, x);
    QCOMPARE(bytes.size(), std::size_t{18});
    QCOMPARE(bytes[0], std::uint8_t{0x00});
    QCOMPARE(bytes[1], std::uint8_t{0x3C});
    // Element j in the low nibble, element j + 16 in the high nibble.
    QCOMPARE(bytes[2], std::uint8_t{0xF0});
    QCOMPARE(bytes[3], std::uint8_t{0x0F});
    QCOMPARE(bytes[4], std::uint8_t{0x88});
    QCOMPARE(bytes[5], std::uint8_t{0x89});
    QCOMPARE(bytes[17], std::uint8_t{0x88});

    // A positive extreme gives a negative scale; it still maps back to itself.
    std::vector<float> y(32, 1.0f);
    y[5] = 8.0f;
    const Bytes flipped = quantizeGgml(TensorType::Q4_0, y);
    QCOMPARE(flipped[1], std::uint8_t{0xBC}); // f16 -1.0 = 0xBC00
    std::vector<float> back(32);
    dequantize(TensorType::Q4_0, flipped, back);
    QCOMPARE(back[5], 8.0f);
    QCOMPARE(back[0], 1.0f);
}

void TestGgmlQuantize::q4_1() {
    std::vector<float> x(32, -3.0f); // minimum -3, maximum 12: d = 1
    x[1] = 12.0f;
    x[2] = 0.49f; // 3.49 + 0.5 -> 3
    x[3] = 0.51f; // 3.51 + 0.5 -> 4
    x[16] = 5.5f; // 8.5 + 0.5 -> 9
    const Bytes bytes = quantizeGgml(TensorType::Q4_1, x);
    QCOMPARE(bytes.size(), std::size_t{20});
    QCOMPARE(bytes[0], std::uint8_t{0x00}); // d = 1.0
    QCOMPARE(bytes[1], std::uint8_t{0x3C});
    QCOMPARE(bytes[2], std::uint8_t{0x00}); // m = -3.0 = 0xC200
    QCOMPARE(bytes[3], std::uint8_t{0xC2});
    QCOMPARE(bytes[4], std::uint8_t{0x90});
    QCOMPARE(bytes[5], std::uint8_t{0x0F});
    QCOMPARE(bytes[6], std::uint8_t{0x03});
    QCOMPARE(bytes[7], std::uint8_t{0x04});
    QCOMPARE(bytes[19], std::uint8_t{0x00});
    std::vector<float> back(32);
    dequantize(TensorType::Q4_1, bytes, back);
    QCOMPARE(back[1], 12.0f);
    QCOMPARE(back[16], 6.0f);
}

void TestGgmlQuantize::q5_0() {
    std::vector<float> x(32, 0.0f);
    x[0] = -16.0f; // largest magnitude, negative: d = 1
    x[1] = 15.0f;  // 31.5 -> 31: fifth bit set
    x[2] = 0.4f;   // 16.9 -> 16: fifth bit set, nibble 0
    x[17] = -0.6f; // 15.9 -> 15: fifth bit clear
    const Bytes bytes = quantizeGgml(TensorType::Q5_0, x);
    QCOMPARE(bytes.size(), std::size_t{22});
    QCOMPARE(bytes[1], std::uint8_t{0x3C}); // d = 1.0
    const std::uint32_t qh = bytes[2] | (bytes[3] << 8) | (bytes[4] << 16) | (bytes[5] << 24);
    QCOMPARE(qh & 1u, 0u);        // element 0: code 0
    QCOMPARE((qh >> 1) & 1u, 1u); // element 1: code 31
    QCOMPARE((qh >> 17) & 1u, 0u);
    QCOMPARE(bytes[6], std::uint8_t{0x00}); // elements 0 and 16: codes 0 and 16 (nibble 0)
    QCOMPARE(bytes[7], std::uint8_t{0xFF}); // element 1: 31, element 17: 15
    QCOMPARE(bytes[8], std::uint8_t{0x00}); // element 2: 16, element 18: 16
    std::vector<float> back(32);
    dequantize(TensorType::Q5_0, bytes, back);
    QCOMPARE(back[0], -16.0f);
    QCOMPARE(back[1], 15.0f);
    QCOMPARE(back[17], -1.0f);
}

// Random rows (normal values with a few large ones, as weights have) through the quantizer
// and the host decoder: the relative error ||x - x^|| / ||x|| stays within the type's bound
// (1.25 times what these quantizers reached when written; a wrong layout gives about 1).
void TestGgmlQuantize::roundTripsEveryType_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<double>("bound");
    const std::pair<TensorType, double> types[] = {
        {TensorType::Q8_0, 0.011},   {TensorType::Q6_K, 0.033}, {TensorType::Q5_0, 0.085},
        {TensorType::Q5_1, 0.06},    {TensorType::Q5_K, 0.06},  {TensorType::Q4_0, 0.18},
        {TensorType::Q4_1, 0.12},    {TensorType::Q4_K, 0.12},  {TensorType::IQ4_NL, 0.135},
        {TensorType::IQ4_XS, 0.135}, {TensorType::Q3_K, 0.25},  {TensorType::Q2_K, 0.5}};
    for (const auto& [type, bound] : types)
        QTest::newRow(std::string(tensorTypeName(type)).c_str()) << int(type) << bound;
}

void TestGgmlQuantize::roundTripsEveryType() {
    QFETCH(int, type);
    QFETCH(double, bound);
    const auto tensorType = static_cast<TensorType>(type);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> x(4 * 256);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * (i % 97 == 3 ? 8.0f : 1.0f);
    const Bytes bytes = quantizeGgml(tensorType, x);
    QCOMPARE(std::uint64_t(bytes.size()), tensorBytes(tensorType, x.size()).value());
    std::vector<float> back(x.size());
    dequantize(tensorType, bytes, back);
    double error = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        error += double(x[i] - back[i]) * double(x[i] - back[i]);
        norm += double(x[i]) * double(x[i]);
    }
    const double relative = std::sqrt(error / norm);
    QVERIFY2(relative <= bound, qPrintable(QString("%1: relative error %2 above %3")
                                               .arg(tensorTypeName(tensorType).data())
                                               .arg(relative)
                                               .arg(bound)));
    qInfo("%s: relative error %.4f", tensorTypeName(tensorType).data(), relative);
}

void TestGgmlQuantize::zeroBlocks() {
    const std::vector<float> zeros(512, 0.0f);
    for (TensorType type : supportedTensorTypes()) {
        const auto traits = tensorTypeTraits(type);
        if (traits.blockElements == 1) continue; // plain floats: not block types
        const Bytes bytes = quantizeGgml(type, zeros);
        QCOMPARE(bytes.size(), 512 / traits.blockElements * std::size_t{traits.blockBytes});
        std::vector<float> back(512, 1.0f);
        dequantize(type, bytes, back);
        for (float value : back) QCOMPARE(value, 0.0f);
    }
    QCOMPARE(quantizeGgml(TensorType::Q4_0, zeros)[2], std::uint8_t{0x88});
}

void TestGgmlQuantize::refusesPartialBlocksAndOtherTypes() {
    const std::vector<float> values(33, 1.0f);
    QVERIFY_THROWS_EXCEPTION(ModelError, quantizeGgml(TensorType::Q8_0, values));
    QVERIFY_THROWS_EXCEPTION(ModelError,
                             quantizeGgml(TensorType::Q4_K, std::vector<float>(288, 1.0f)));
    QVERIFY_THROWS_EXCEPTION(ModelError,
                             quantizeGgml(TensorType::F16, std::vector<float>(32, 1.0f)));
    QVERIFY(quantizeGgml(TensorType::Q8_0, std::vector<float>()).empty());
}

QTEST_APPLESS_MAIN(TestGgmlQuantize)
#include "test_ggml_quantize.moc"
