// Dequantization of every supported tensor type from hand-built blocks. Each test packs its
// block from the format's description and computes the expected values itself, so the
// decoder under test is checked against an independent encoder, not against itself.
#include "models/ModelError.hpp"
#include "models/formats/TensorType.hpp"

#include <QtTest>
#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <vector>

using namespace inferscope::models;

namespace {

// IEEE half encodings of a few exact values.
constexpr std::uint16_t halfOne = 0x3C00;
constexpr std::uint16_t halfTwo = 0x4000;
constexpr std::uint16_t halfHalf = 0x3800;    // 0.5
constexpr std::uint16_t halfQuarter = 0x3400; // 0.25
constexpr std::uint16_t halfMinusOne = 0xBC00;

void putHalf(std::vector<std::uint8_t>& block, std::size_t at, std::uint16_t value) {
    block[at] = static_cast<std::uint8_t>(value & 0xFF);
    block[at + 1] = static_cast<std::uint8_t>(value >> 8);
}

std::vector<float> decode(TensorType type, const std::vector<std::uint8_t>& bytes,
                          std::size_t elements) {
    std::vector<float> out(elements, std::numeric_limits<float>::quiet_NaN());
    dequantize(type, bytes, out);
    return out;
}

float fromBits(std::uint32_t bits) {
    return std::bit_cast<float>(bits);
}
std::uint32_t bitsOf(float value) {
    return std::bit_cast<std::uint32_t>(value);
}

// Packs eight 6-bit scales and mins the way Q4_K/Q5_K store them in 12 bytes.
std::array<std::uint8_t, 12> packScalesAndMins(const std::array<std::uint8_t, 8>& scales,
                                               const std::array<std::uint8_t, 8>& mins) {
    std::array<std::uint8_t, 12> packed{};
    for (int j = 0; j < 4; ++j) {
        packed[j] = static_cast<std::uint8_t>((scales[j] & 63) | ((scales[j + 4] >> 4) << 6));
        packed[j + 4] = static_cast<std::uint8_t>((mins[j] & 63) | ((mins[j + 4] >> 4) << 6));
        packed[j + 8] = static_cast<std::uint8_t>((scales[j + 4] & 15) | ((mins[j + 4] & 15) << 4));
    }
    return packed;
}

} // namespace

class TestDequantize : public QObject {
    Q_OBJECT

private slots:
    void traits() {
        QCOMPARE(tensorTypeTraits(TensorType::Q4_0).blockBytes, 18u);
        QCOMPARE(tensorTypeTraits(TensorType::Q4_1).blockBytes, 20u);
        QCOMPARE(tensorTypeTraits(TensorType::Q8_0).blockBytes, 34u);
        QCOMPARE(tensorTypeTraits(TensorType::Q4_K).blockBytes, 144u);
        QCOMPARE(tensorTypeTraits(TensorType::Q5_K).blockBytes, 176u);
        QCOMPARE(tensorTypeTraits(TensorType::Q6_K).blockBytes, 210u);
        QCOMPARE(tensorTypeTraits(TensorType::Q6_K).blockElements, 256u);
        QCOMPARE(tensorTypeTraits(TensorType::Q8_0).blockElements, 32u);
        QCOMPARE(tensorTypeTraits(TensorType::BF16).blockBytes, 2u);
        QVERIFY(tensorTypeName(TensorType::Q4_K) == "Q4_K");
        QVERIFY(tensorTypeName(TensorType::BF16) == "BF16");
        QCOMPARE(tensorTypeTraits(TensorType::Q5_0).blockBytes, 22u);
        QCOMPARE(tensorTypeTraits(TensorType::Q5_1).blockBytes, 24u);
        QCOMPARE(tensorTypeTraits(TensorType::IQ4_NL).blockBytes, 18u);
        QCOMPARE(tensorTypeTraits(TensorType::Q2_K).blockBytes, 84u);
        QCOMPARE(tensorTypeTraits(TensorType::Q3_K).blockBytes, 110u);
        QCOMPARE(tensorTypeTraits(TensorType::IQ4_XS).blockBytes, 136u);
        QCOMPARE(tensorTypeTraits(TensorType::IQ4_XS).blockElements, 256u);
        QVERIFY(tensorTypeTraits(std::uint32_t{6}).has_value());   // Q5_0
        QVERIFY(!tensorTypeTraits(std::uint32_t{16}).has_value()); // IQ2_XXS: not read
        QVERIFY(!tensorTypeTraits(std::uint32_t{99}).has_value());
        // Types are named, never a number alone.
        QCOMPARE(describeTensorType(6), std::string("Q5_0"));
        QCOMPARE(describeTensorType(16), std::string("IQ2_XXS (GGUF type 16)"));
        QCOMPARE(describeTensorType(99), std::string("GGUF type 99 (not a ggml type)"));
        for (TensorType type : supportedTensorTypes())
            QCOMPARE(describeTensorType(std::uint32_t(type)), std::string(tensorTypeName(type)));
        QVERIFY(tensorTypeTraits(std::uint32_t{30}).has_value());
        QCOMPARE(tensorBytes(TensorType::Q4_K, 512).value(), 288ull);
        QCOMPARE(tensorBytes(TensorType::F16, 3).value(), 6ull);
        QVERIFY(!tensorBytes(TensorType::Q4_K, 255).has_value());
        QVERIFY(!tensorBytes(TensorType::Q8_0, 33).has_value());
        QVERIFY(
            !tensorBytes(TensorType::F32, std::numeric_limits<std::uint64_t>::max()).has_value());
    }

    void plainFloats() {
        std::vector<std::uint8_t> f32(8);
        const float values[2] = {1.5f, -3.25f};
        std::memcpy(f32.data(), values, 8);
        auto out = decode(TensorType::F32, f32, 2);
        QCOMPARE(out[0], 1.5f);
        QCOMPARE(out[1], -3.25f);

        std::vector<std::uint8_t> f16(6);
        putHalf(f16, 0, halfTwo);
        putHalf(f16, 2, 0xC500); // -5
        putHalf(f16, 4, 0x3555); // 0.333251953125
        out = decode(TensorType::F16, f16, 3);
        QCOMPARE(out[0], 2.0f);
        QCOMPARE(out[1], -5.0f);
        QCOMPARE(out[2], 0.333251953125f);

        std::vector<std::uint8_t> bf16(4);
        putHalf(bf16, 0, 0x3FC0); // 1.5
        putHalf(bf16, 2, 0xC2F7); // -123.5
        out = decode(TensorType::BF16, bf16, 2);
        QCOMPARE(out[0], 1.5f);
        QCOMPARE(out[1], -123.5f);
    }

    void q8_0() {
        // Two blocks, to check the block stride too.
        std::vector<std::uint8_t> bytes(2 * 34);
        putHalf(bytes, 0, halfHalf);
        putHalf(bytes, 34, halfMinusOne);
        for (int i = 0; i < 32; ++i) {
            bytes[2 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(i * 8 - 128));
            bytes[36 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(127 - i));
        }
        const auto out = decode(TensorType::Q8_0, bytes, 64);
        QCOMPARE(out[0], -64.0f); // -128 * 0.5
        QCOMPARE(out[16], 0.0f);
        QCOMPARE(out[31], 60.0f); // 120 * 0.5
        QCOMPARE(out[32], -127.0f);
        QCOMPARE(out[63], -96.0f);
        for (int i = 0; i < 32; ++i) {
            QCOMPARE(out[i], static_cast<float>(i * 8 - 128) * 0.5f);
            QCOMPARE(out[32 + i], -static_cast<float>(127 - i));
        }
    }

    void q4_0() {
        std::vector<std::uint8_t> bytes(18);
        putHalf(bytes, 0, halfTwo);
        // Element i (i < 16) is the low nibble of byte i, element i + 16 the high nibble.
        for (int i = 0; i < 16; ++i) bytes[2 + i] = static_cast<std::uint8_t>(i | ((15 - i) << 4));
        const auto out = decode(TensorType::Q4_0, bytes, 32);
        QCOMPARE(out[0], -16.0f); // (0 - 8) * 2
        QCOMPARE(out[15], 14.0f); // (15 - 8) * 2
        QCOMPARE(out[16], 14.0f);
        QCOMPARE(out[31], -16.0f);
        for (int i = 0; i < 16; ++i) {
            QCOMPARE(out[i], static_cast<float>(i - 8) * 2.0f);
            QCOMPARE(out[16 + i], static_cast<float>(7 - i) * 2.0f);
        }
    }

    void q4_1() {
        std::vector<std::uint8_t> bytes(20);
        putHalf(bytes, 0, halfHalf);
        putHalf(bytes, 2, halfMinusOne);
        for (int i = 0; i < 16; ++i)
            bytes[4 + i] = static_cast<std::uint8_t>(((i * 5) & 15) | (((i + 9) & 15) << 4));
        const auto out = decode(TensorType::Q4_1, bytes, 32);
        QCOMPARE(out[0], -1.0f);  // 0 * 0.5 - 1
        QCOMPARE(out[16], 3.5f);  // 9 * 0.5 - 1
        QCOMPARE(out[3], 6.5f);   // 15 * 0.5 - 1
        QCOMPARE(out[23], -1.0f); // (7 + 9) & 15 = 0
        for (int i = 0; i < 16; ++i) {
            QCOMPARE(out[i], static_cast<float>((i * 5) & 15) * 0.5f - 1.0f);
            QCOMPARE(out[16 + i], static_cast<float>((i + 9) & 15) * 0.5f - 1.0f);
        }
    }

    void q4_K() {
        const std::array<std::uint8_t, 8> scales{1, 2, 3, 4, 33, 45, 50, 63};
        const std::array<std::uint8_t, 8> mins{0, 5, 10, 15, 20, 40, 62, 7};
        std::vector<std::uint8_t> bytes(144);
        putHalf(bytes, 0, halfOne);  // d
        putHalf(bytes, 2, halfHalf); // dmin
        const auto packed = packScalesAndMins(scales, mins);
        std::copy(packed.begin(), packed.end(), bytes.begin() + 4);
        // Quant of element l of sub-block s: sub-blocks 2c and 2c+1 share bytes 32c..32c+31
        // (low and high nibbles).
        auto quant = [](int s, int l) { return (l * (s + 1) + s) & 15; };
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l)
                bytes[16 + 32 * c + l] =
                    static_cast<std::uint8_t>(quant(2 * c, l) | (quant(2 * c + 1, l) << 4));
        const auto out = decode(TensorType::Q4_K, bytes, 256);
        QCOMPARE(out[0], 0.0f);         // 1 * 0 - 0.5 * 0
        QCOMPARE(out[32 + 1], 3.5f);    // s=1, q=(2+1)&15=3: 2*3 - 0.5*5
        QCOMPARE(out[160 + 1], 475.0f); // s=5, q=(6+5)&15=11: 45*11 - 0.5*40 (high scale bits)
        QCOMPARE(out[224 + 2], 437.5f); // s=7, q=(16+7)&15=7: 63*7 - 0.5*7
        for (int s = 0; s < 8; ++s)
            for (int l = 0; l < 32; ++l)
                QCOMPARE(out[32 * s + l],
                         1.0f * scales[s] * static_cast<float>(quant(s, l)) - 0.5f * mins[s]);
    }

    void q5_K() {
        const std::array<std::uint8_t, 8> scales{63, 17, 2, 40, 16, 31, 48, 5};
        const std::array<std::uint8_t, 8> mins{1, 33, 0, 63, 48, 9, 16, 32};
        std::vector<std::uint8_t> bytes(176);
        putHalf(bytes, 0, halfQuarter); // d
        putHalf(bytes, 2, halfTwo);     // dmin
        const auto packed = packScalesAndMins(scales, mins);
        std::copy(packed.begin(), packed.end(), bytes.begin() + 4);
        auto quant = [](int s, int l) { return (l * 7 + s * 3) & 31; }; // 5 bits
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                const int low = quant(2 * c, l), high = quant(2 * c + 1, l);
                bytes[48 + 32 * c + l] = static_cast<std::uint8_t>((low & 15) | ((high & 15) << 4));
                // Fifth bit of sub-block s's element l: bit s of qh[l].
                bytes[16 + l] |= static_cast<std::uint8_t>(((low >> 4) << (2 * c)) |
                                                           ((high >> 4) << (2 * c + 1)));
            }
        const auto out = decode(TensorType::Q5_K, bytes, 256);
        QCOMPARE(out[0], 0.25f * 63 * 0 - 2.0f * 1); // -2
        QCOMPARE(out[32 * 3 + 5], -6.0f);            // q=(35+9)&31=12: 0.25*40*12 - 2*63
        for (int s = 0; s < 8; ++s)
            for (int l = 0; l < 32; ++l)
                QCOMPARE(out[32 * s + l],
                         0.25f * scales[s] * static_cast<float>(quant(s, l)) - 2.0f * mins[s]);
    }

    void q6_K() {
        std::array<std::int8_t, 16> scales{};
        for (int i = 0; i < 16; ++i)
            scales[i] = static_cast<std::int8_t>((i % 2 ? -7 : 7) * (i + 1));
        auto quant = [](int e) { return (e * 7 + 3) % 64; }; // 6 bits, stored with +32 offset
        std::vector<std::uint8_t> bytes(210);
        // Layout: ql[128] low nibbles, qh[64] 2-bit high parts, scales[16], d.
        for (int e = 0; e < 256; ++e) {
            const int half = e / 128, position = e % 128;
            const int group = position / 32, l = position % 32;
            const int q = quant(e);
            const int lowIndex = 64 * half + l + ((group & 1) ? 32 : 0);
            bytes[lowIndex] |= static_cast<std::uint8_t>((q & 15) << ((group & 2) ? 4 : 0));
            bytes[128 + 32 * half + l] |= static_cast<std::uint8_t>((q >> 4) << (2 * group));
        }
        for (int i = 0; i < 16; ++i) bytes[192 + i] = static_cast<std::uint8_t>(scales[i]);
        putHalf(bytes, 208, halfQuarter);
        const auto out = decode(TensorType::Q6_K, bytes, 256);
        QCOMPARE(out[0], 0.25f * 7 * (3 - 32)); // -50.75
        QCOMPARE(out[255], -784.0f);            // scale -112, q=1788%64=60: 0.25*-112*(60-32)
        for (int e = 0; e < 256; ++e)
            QCOMPARE(out[e], 0.25f * static_cast<float>(scales[e / 16]) *
                                 static_cast<float>(quant(e) - 32));
    }

    void q5_0AndQ5_1() {
        // Element j (< 16): low nibble of byte j, element j + 16: high nibble; bit i of the
        // word after the scale(s) is element i's fifth bit.
        auto code = [](int i) { return (i * 11 + 5) & 31; };
        auto fill = [&](std::vector<std::uint8_t>& block, std::size_t qhAt) {
            std::uint32_t qh = 0;
            for (int j = 0; j < 16; ++j) {
                block[qhAt + 4 + j] =
                    static_cast<std::uint8_t>((code(j) & 15) | ((code(j + 16) & 15) << 4));
                qh |= std::uint32_t(code(j) >> 4) << j;
                qh |= std::uint32_t(code(j + 16) >> 4) << (j + 16);
            }
            for (int b = 0; b < 4; ++b) block[qhAt + b] = static_cast<std::uint8_t>(qh >> (8 * b));
        };
        std::vector<std::uint8_t> q5_0(22);
        putHalf(q5_0, 0, halfHalf);
        fill(q5_0, 2);
        auto out = decode(TensorType::Q5_0, q5_0, 32);
        QCOMPARE(out[0], 0.5f * (5 - 16));
        QCOMPARE(out[17], 0.5f * (((17 * 11 + 5) & 31) - 16)); // 192 & 31 = 0: -8
        for (int i = 0; i < 32; ++i) QCOMPARE(out[i], 0.5f * static_cast<float>(code(i) - 16));
        std::vector<std::uint8_t> q5_1(24);
        putHalf(q5_1, 0, halfQuarter);
        putHalf(q5_1, 2, halfMinusOne);
        fill(q5_1, 4);
        out = decode(TensorType::Q5_1, q5_1, 32);
        for (int i = 0; i < 32; ++i) QCOMPARE(out[i], 0.25f * static_cast<float>(code(i)) - 1.0f);
    }

    void iq4_nlAndIq4_xs() {
        // The codebook as ggml defines it (ggml-common.h, kvalues_iq4nl).
        const int levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                1,    13,   25,  38,  53,  69,  89,  113};
        std::vector<std::uint8_t> nl(18);
        putHalf(nl, 0, halfQuarter);
        for (int j = 0; j < 16; ++j) nl[2 + j] = static_cast<std::uint8_t>(j | ((15 - j) << 4));
        auto out = decode(TensorType::IQ4_NL, nl, 32);
        QCOMPARE(out[0], -31.75f); // 0.25 * -127
        QCOMPARE(out[16], 28.25f); // 0.25 * 113
        for (int j = 0; j < 16; ++j) {
            QCOMPARE(out[j], 0.25f * static_cast<float>(levels[j]));
            QCOMPARE(out[j + 16], 0.25f * static_cast<float>(levels[15 - j]));
        }
        // IQ4_XS: sub-block b's 6-bit scale ls (stored plus 32): low nibble in scales_l[b / 2]
        // (b odd: high nibble), top two bits at bit 2b of scales_h.
        const int ls[8] = {0, 63, 32, 31, 17, 48, 5, 40};
        std::vector<std::uint8_t> xs(136);
        putHalf(xs, 0, halfHalf);
        std::uint16_t high = 0;
        for (int b = 0; b < 8; ++b) {
            xs[4 + b / 2] |= static_cast<std::uint8_t>((ls[b] & 15) << (4 * (b % 2)));
            high = static_cast<std::uint16_t>(high | ((ls[b] >> 4) << (2 * b)));
            for (int j = 0; j < 16; ++j)
                xs[8 + 16 * b + j] =
                    static_cast<std::uint8_t>(((j + b) & 15) | (((j * 3 + b) & 15) << 4));
        }
        xs[2] = static_cast<std::uint8_t>(high);
        xs[3] = static_cast<std::uint8_t>(high >> 8);
        out = decode(TensorType::IQ4_XS, xs, 256);
        QCOMPARE(out[0], 0.5f * -32 * -127); // 2032
        for (int b = 0; b < 8; ++b)
            for (int j = 0; j < 16; ++j) {
                const float dl = 0.5f * static_cast<float>(ls[b] - 32);
                QCOMPARE(out[32 * b + j], dl * static_cast<float>(levels[(j + b) & 15]));
                QCOMPARE(out[32 * b + j + 16], dl * static_cast<float>(levels[(j * 3 + b) & 15]));
            }
    }

    void q2_KAndQ3_K() {
        // Element e of the super-block: half h = e / 128, group g = (e % 128) / 32, l = e % 32;
        // its 2-bit field is bits 2g of qs[32 h + l]; sub-block e / 16.
        auto field = [](int e) { return (e * 5 + e / 7) & 3; };
        std::vector<std::uint8_t> q2(84);
        for (int s = 0; s < 16; ++s)
            q2[s] = static_cast<std::uint8_t>(((s * 3) & 15) | ((15 - s) << 4));
        for (int e = 0; e < 256; ++e)
            q2[16 + 32 * (e / 128) + e % 32] |=
                static_cast<std::uint8_t>(field(e) << (2 * ((e % 128) / 32)));
        putHalf(q2, 80, halfHalf);    // d
        putHalf(q2, 82, halfQuarter); // dmin
        auto out = decode(TensorType::Q2_K, q2, 256);
        for (int e = 0; e < 256; ++e) {
            const int s = e / 16;
            QCOMPARE(out[e],
                     0.5f * static_cast<float>((s * 3) & 15) * static_cast<float>(field(e)) -
                         0.25f * static_cast<float>(15 - s));
        }
        // Q3_K: hmask bit (4 h + g) of byte l set: the value is the field, clear: field - 4.
        // Scale j (6 bits, stored plus 32): low nibble of byte j % 8 (high nibble for j >= 8),
        // top two bits at bit 2 (j / 4) of byte 8 + j % 4.
        auto highBit = [](int e) { return (e * 13 + 1) % 3 == 0; };
        const int scales[16] = {-32, 31, 0, 5, -7, 12, 30, -1, 17, -20, 9, 3, -15, 22, 1, -3};
        std::vector<std::uint8_t> q3(110);
        for (int e = 0; e < 256; ++e) {
            q3[32 + 32 * (e / 128) + e % 32] |=
                static_cast<std::uint8_t>(field(e) << (2 * ((e % 128) / 32)));
            if (highBit(e))
                q3[e % 32] |= static_cast<std::uint8_t>(1 << (4 * (e / 128) + (e % 128) / 32));
        }
        for (int j = 0; j < 16; ++j) {
            const int v = scales[j] + 32;
            q3[96 + j % 8] |= static_cast<std::uint8_t>((v & 15) << (j < 8 ? 0 : 4));
            q3[104 + j % 4] |= static_cast<std::uint8_t>((v >> 4) << (2 * (j / 4)));
        }
        putHalf(q3, 108, halfTwo);
        out = decode(TensorType::Q3_K, q3, 256);
        for (int e = 0; e < 256; ++e)
            QCOMPARE(out[e], 2.0f * static_cast<float>(scales[e / 16]) *
                                 static_cast<float>(field(e) - (highBit(e) ? 0 : 4)));
    }

    void matchesPythonGgufPackage() {
        // One pseudo-random block per quantized type, dequantized by the `gguf` Python
        // package (scripts/make-gguf-fixtures.py). Same float32 operations in the same
        // order, so the values must agree exactly.
        std::ifstream in(INFERSCOPE_TEST_DATA "/gguf-fixtures.json");
        QVERIFY2(in, "tests/data/gguf-fixtures.json is missing");
        const auto fixture = nlohmann::json::parse(in);
        const std::map<std::string, TensorType> types{
            {"Q4_0", TensorType::Q4_0}, {"Q4_1", TensorType::Q4_1}, {"Q8_0", TensorType::Q8_0},
            {"Q4_K", TensorType::Q4_K}, {"Q5_K", TensorType::Q5_K}, {"Q6_K", TensorType::Q6_K}};
        std::set<std::string> seen;
        for (const auto& block : fixture.at("blocks")) {
            const std::string name = block.at("type");
            const std::string hex = block.at("hex");
            std::vector<std::uint8_t> bytes(hex.size() / 2);
            for (std::size_t i = 0; i < bytes.size(); ++i)
                bytes[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
            const auto expected = block.at("values").get<std::vector<float>>();
            const auto out = decode(types.at(name), bytes, expected.size());
            for (std::size_t i = 0; i < expected.size(); ++i)
                QVERIFY2(out[i] == expected[i], qPrintable(QString("%1[%2]: %3 vs python %4")
                                                               .arg(name.c_str())
                                                               .arg(i)
                                                               .arg(out[i], 0, 'g', 9)
                                                               .arg(expected[i], 0, 'g', 9)));
            seen.insert(name);
        }
        QCOMPARE(seen.size(), types.size());
    }

    void sizeMismatchThrows() {
        std::vector<std::uint8_t> bytes(33);
        std::vector<float> out(32);
        QVERIFY_THROWS_EXCEPTION(ModelError, dequantize(TensorType::Q8_0, bytes, out));
        std::vector<float> notWholeBlocks(31);
        std::vector<std::uint8_t> enough(34);
        QVERIFY_THROWS_EXCEPTION(ModelError, dequantize(TensorType::Q8_0, enough, notWholeBlocks));
    }

    void halfToFloatEdges() {
        QCOMPARE(halfToFloat(0x0000), 0.0f);
        QVERIFY(std::signbit(halfToFloat(0x8000)));
        QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));           // smallest subnormal
        QCOMPARE(halfToFloat(0x03FF), 1023.0f * std::ldexp(1.0f, -24)); // largest subnormal
        QCOMPARE(halfToFloat(0x0400), std::ldexp(1.0f, -14));           // smallest normal
        QCOMPARE(halfToFloat(0x7BFF), 65504.0f);
        QCOMPARE(halfToFloat(0xFBFF), -65504.0f);
        QCOMPARE(halfToFloat(halfOne), 1.0f);
        QCOMPARE(halfToFloat(0x3C01), 1.0f + std::ldexp(1.0f, -10));
        QVERIFY(std::isinf(halfToFloat(0x7C00)) && halfToFloat(0x7C00) > 0);
        QVERIFY(std::isinf(halfToFloat(0xFC00)) && halfToFloat(0xFC00) < 0);
        QVERIFY(std::isnan(halfToFloat(0x7E00)));
        QVERIFY(std::isnan(halfToFloat(0x7C01))); // signalling NaN stays NaN
    }

    void floatToHalfRounding() {
        QCOMPARE(floatToHalf(1.0f), halfOne);
        QCOMPARE(floatToHalf(-2.0f), std::uint16_t{0xC000});
        QCOMPARE(floatToHalf(-0.0f), std::uint16_t{0x8000});
        QCOMPARE(floatToHalf(65504.0f), std::uint16_t{0x7BFF});
        QCOMPARE(floatToHalf(65519.0f), std::uint16_t{0x7BFF}); // below the halfway point
        QCOMPARE(floatToHalf(65520.0f), std::uint16_t{0x7C00}); // tie: rounds to even = inf
        QCOMPARE(floatToHalf(1e6f), std::uint16_t{0x7C00});
        QCOMPARE(floatToHalf(-1e6f), std::uint16_t{0xFC00});
        QCOMPARE(floatToHalf(std::numeric_limits<float>::infinity()), std::uint16_t{0x7C00});
        const std::uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
        QVERIFY((nan & 0x7C00) == 0x7C00 && (nan & 0x03FF) != 0);
        // A NaN whose payload sits only in low bits must not turn into infinity.
        const std::uint16_t lowNan = floatToHalf(fromBits(0x7F800001));
        QVERIFY((lowNan & 0x7C00) == 0x7C00 && (lowNan & 0x03FF) != 0);
        // Ties to even in the normal range: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
        QCOMPARE(floatToHalf(1.0f + std::ldexp(1.0f, -11)), std::uint16_t{0x3C00});
        QCOMPARE(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), std::uint16_t{0x3C02});
        QCOMPARE(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
                 std::uint16_t{0x3C01});
        // Subnormals: units of 2^-24.
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -24)), std::uint16_t{0x0001});
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -25)), std::uint16_t{0x0000}); // tie to even 0
        QCOMPARE(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), std::uint16_t{0x0001});
        QCOMPARE(floatToHalf(3 * std::ldexp(1.0f, -25)), std::uint16_t{0x0002}); // 1.5 -> 2
        QCOMPARE(floatToHalf(5 * std::ldexp(1.0f, -25)), std::uint16_t{0x0002}); // 2.5 -> 2
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -26)), std::uint16_t{0x0000});
        QCOMPARE(floatToHalf(-std::ldexp(1.0f, -24)), std::uint16_t{0x8001});
        QCOMPARE(floatToHalf(1e-40f), std::uint16_t{0x0000}); // float subnormal
        // Largest subnormal + half a unit: ties to the even neighbour, the smallest normal.
        QCOMPARE(floatToHalf(1023.5f * std::ldexp(1.0f, -24)), std::uint16_t{0x0400});
        QCOMPARE(floatToHalf(std::ldexp(1.0f, -14)), std::uint16_t{0x0400});
    }

    void halfRoundTripsEveryValue() {
        for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
            const float value = halfToFloat(static_cast<std::uint16_t>(h));
            if (std::isnan(value)) {
                QVERIFY(std::isnan(halfToFloat(floatToHalf(value))));
                continue;
            }
            if (floatToHalf(value) != h) QFAIL(qPrintable(QString("half 0x%1").arg(h, 4, 16)));
        }
    }

    void bf16Conversions() {
        QCOMPARE(bf16ToFloat(0x3F80), 1.0f);
        QCOMPARE(bf16ToFloat(0xC000), -2.0f);
        QCOMPARE(floatToBf16(1.0f), std::uint16_t{0x3F80});
        QCOMPARE(floatToBf16(-0.0f), std::uint16_t{0x8000});
        QCOMPARE(floatToBf16(1.0f + std::ldexp(1.0f, -8)), std::uint16_t{0x3F80}); // tie, even
        QCOMPARE(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), std::uint16_t{0x3F82});
        QCOMPARE(floatToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
                 std::uint16_t{0x3F81});
        QCOMPARE(floatToBf16(std::numeric_limits<float>::infinity()), std::uint16_t{0x7F80});
        QCOMPARE(floatToBf16(std::numeric_limits<float>::max()), std::uint16_t{0x7F80});
        QCOMPARE(floatToBf16(fromBits(0x00010000)), std::uint16_t{0x0001}); // subnormal kept
        const std::uint16_t lowNan = floatToBf16(fromBits(0x7F800001));
        QVERIFY(std::isnan(bf16ToFloat(lowNan)));
        QVERIFY(std::isnan(bf16ToFloat(floatToBf16(std::numeric_limits<float>::quiet_NaN()))));
        for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
            const float value = bf16ToFloat(static_cast<std::uint16_t>(b));
            if (std::isnan(value)) continue;
            if (floatToBf16(value) != b) QFAIL(qPrintable(QString("bf16 0x%1").arg(b, 4, 16)));
            QCOMPARE(bitsOf(value) & 0xFFFF, 0u);
        }
    }
};

QTEST_APPLESS_MAIN(TestDequantize)
#include "test_dequantize.moc"
