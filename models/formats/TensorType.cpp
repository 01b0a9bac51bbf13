#include "models/formats/TensorType.hpp"

#include "models/ModelError.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace inferscope::models {

namespace {

// K-quants group 256 elements into a super-block (QK_K in ggml).
constexpr std::uint32_t superBlock = 256;

constexpr TensorTypeTraits traitsF32{"F32", 1, 4};
constexpr TensorTypeTraits traitsF16{"F16", 1, 2};
constexpr TensorTypeTraits traitsBF16{"BF16", 1, 2};
constexpr TensorTypeTraits traitsQ4_0{"Q4_0", 32, 2 + 16};
constexpr TensorTypeTraits traitsQ4_1{"Q4_1", 32, 2 + 2 + 16};
constexpr TensorTypeTraits traitsQ8_0{"Q8_0", 32, 2 + 32};
// d, 32 fifth bits (one word), 16 bytes of nibbles; Q5_1 adds m after d.
constexpr TensorTypeTraits traitsQ5_0{"Q5_0", 32, 2 + 4 + 16};
constexpr TensorTypeTraits traitsQ5_1{"Q5_1", 32, 2 + 2 + 4 + 16};
// d, 16 bytes of nibbles indexing the IQ4_NL codebook.
constexpr TensorTypeTraits traitsIQ4_NL{"IQ4_NL", 32, 2 + 16};
// 16 bytes of 4-bit scale and min pairs, 64 bytes of 2-bit quants, d, dmin.
constexpr TensorTypeTraits traitsQ2_K{"Q2_K", superBlock, 16 + 64 + 2 + 2};
// 32 bytes of high bits, 64 bytes of 2-bit quants, 12 bytes of 6-bit scales, d.
constexpr TensorTypeTraits traitsQ3_K{"Q3_K", superBlock, 32 + 64 + 12 + 2};
// d, the top 2 bits of eight 6-bit scales, their low 4 bits, 128 bytes of codebook nibbles.
constexpr TensorTypeTraits traitsIQ4_XS{"IQ4_XS", superBlock, 2 + 2 + 4 + 128};
// d, dmin, 12 bytes of packed 6-bit scales and mins, 128 bytes of 4-bit quants.
constexpr TensorTypeTraits traitsQ4_K{"Q4_K", superBlock, 2 + 2 + 12 + 128};
// As Q4_K plus 32 bytes holding the fifth bit of every quant.
constexpr TensorTypeTraits traitsQ5_K{"Q5_K", superBlock, 2 + 2 + 12 + 32 + 128};
// 128 bytes low 4 bits, 64 bytes high 2 bits, 16 int8 scales, d.
constexpr TensorTypeTraits traitsQ6_K{"Q6_K", superBlock, 128 + 64 + 16 + 2};

std::uint16_t loadU16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

float loadHalf(const std::uint8_t* p) {
    return halfToFloat(loadU16(p));
}

std::uint32_t loadU32(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

float loadF32(const std::uint8_t* p) {
    return std::bit_cast<float>(loadU32(p));
}

// Scale and min j (0..7) of a Q4_K/Q5_K super-block. The 12 bytes hold eight 6-bit
// scales and eight 6-bit mins: bytes 0-3 / 4-7 carry scales / mins 0-3 in their low six
// bits and the top two bits of scales / mins 4-7; bytes 8-11 carry the low four bits of
// scale 4-7 (low nibble) and min 4-7 (high nibble).
void scaleAndMin(const std::uint8_t* packed, int j, std::uint8_t& scale, std::uint8_t& min) {
    if (j < 4) {
        scale = packed[j] & 63;
        min = packed[j + 4] & 63;
    } else {
        scale = static_cast<std::uint8_t>((packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4));
        min = static_cast<std::uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}

void dequantizeQ4_0(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const std::uint8_t* qs = block + 2;
    for (int i = 0; i < 16; ++i) {
        out[i] = static_cast<float>((qs[i] & 0x0F) - 8) * d;
        out[i + 16] = static_cast<float>((qs[i] >> 4) - 8) * d;
    }
}

void dequantizeQ4_1(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const float m = loadHalf(block + 2);
    const std::uint8_t* qs = block + 4;
    for (int i = 0; i < 16; ++i) {
        out[i] = static_cast<float>(qs[i] & 0x0F) * d + m;
        out[i + 16] = static_cast<float>(qs[i] >> 4) * d + m;
    }
}

void dequantizeQ8_0(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    for (int i = 0; i < 32; ++i)
        out[i] = static_cast<float>(static_cast<std::int8_t>(block[2 + i])) * d;
}

// Q5_0 / Q5_1: element j (< 16) is the low nibble of byte j, element j + 16 the high nibble,
// and bit i of the little-endian word qh is the fifth bit of element i.
void dequantizeQ5_0(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const std::uint32_t qh = loadU32(block + 2);
    const std::uint8_t* qs = block + 6;
    for (int j = 0; j < 16; ++j) {
        const int low = (qs[j] & 0x0F) | int(((qh >> j) & 1u) << 4);
        const int high = (qs[j] >> 4) | int(((qh >> (j + 16)) & 1u) << 4);
        out[j] = static_cast<float>(low - 16) * d;
        out[j + 16] = static_cast<float>(high - 16) * d;
    }
}

void dequantizeQ5_1(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const float m = loadHalf(block + 2);
    const std::uint32_t qh = loadU32(block + 4);
    const std::uint8_t* qs = block + 8;
    for (int j = 0; j < 16; ++j) {
        const int low = (qs[j] & 0x0F) | int(((qh >> j) & 1u) << 4);
        const int high = (qs[j] >> 4) | int(((qh >> (j + 16)) & 1u) << 4);
        out[j] = static_cast<float>(low) * d + m;
        out[j + 16] = static_cast<float>(high) * d + m;
    }
}

void dequantizeIQ4_NL(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const std::uint8_t* qs = block + 2;
    for (int j = 0; j < 16; ++j) {
        out[j] = d * static_cast<float>(kIq4NlLevels[qs[j] & 0x0F]);
        out[j + 16] = d * static_cast<float>(kIq4NlLevels[qs[j] >> 4]);
    }
}

// Q2_K: each half of 128 elements takes 32 bytes of qs; its four groups of 32 elements read
// the 2-bit fields at bits 0, 2, 4, 6 of those bytes. Sub-block s (16 elements) has the
// scale byte s: low nibble scales d, high nibble scales dmin.
void dequantizeQ2_K(const std::uint8_t* block, float* out) {
    const std::uint8_t* scales = block;
    const std::uint8_t* qs = block + 16;
    const float d = loadHalf(block + 80);
    const float dmin = loadHalf(block + 82);
    for (int e = 0; e < 256; ++e) {
        const int half = e / 128, group = (e % 128) / 32, l = e % 32;
        const std::uint8_t sc = scales[e / 16];
        const float dl = d * static_cast<float>(sc & 0x0F);
        const float ml = dmin * static_cast<float>(sc >> 4);
        const int q = (qs[32 * half + l] >> (2 * group)) & 3;
        out[e] = dl * static_cast<float>(q) - ml;
    }
}

// Q3_K's sixteen 6-bit scales (stored minus 32): the low four bits of scale j are the low
// (j < 8) or high (j >= 8) nibble of byte j % 8, the top two bits are bits 2 (j / 4) and up of
// byte 8 + j % 4.
int q3kScale(const std::uint8_t* packed, int j) {
    const int low = j < 8 ? packed[j] & 0x0F : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// Q3_K: 2-bit fields as Q2_K, and bit (4 half + group) of hmask[l] set means the element is
// q, clear means q - 4.
void dequantizeQ3_K(const std::uint8_t* block, float* out) {
    const std::uint8_t* hmask = block;
    const std::uint8_t* qs = block + 32;
    const std::uint8_t* scales = block + 96;
    const float d = loadHalf(block + 108);
    for (int e = 0; e < 256; ++e) {
        const int half = e / 128, group = (e % 128) / 32, l = e % 32;
        const float dl = d * static_cast<float>(q3kScale(scales, e / 16));
        const int q = (qs[32 * half + l] >> (2 * group)) & 3;
        const bool high = (hmask[l] >> (4 * half + group)) & 1;
        out[e] = dl * static_cast<float>(q - (high ? 0 : 4));
    }
}

// IQ4_XS: eight sub-blocks of 32 with a 6-bit scale each (stored plus 32: low nibble from
// scales_l, top two bits from scales_h), codes as IQ4_NL's.
void dequantizeIQ4_XS(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const std::uint16_t scalesHigh = loadU16(block + 2);
    const std::uint8_t* scalesLow = block + 4;
    const std::uint8_t* qs = block + 8;
    for (int b = 0; b < 8; ++b) {
        const int ls =
            ((scalesLow[b / 2] >> (4 * (b % 2))) & 0x0F) | (((scalesHigh >> (2 * b)) & 3) << 4);
        const float dl = d * static_cast<float>(ls - 32);
        const std::uint8_t* q = qs + 16 * b;
        for (int j = 0; j < 16; ++j) {
            out[32 * b + j] = dl * static_cast<float>(kIq4NlLevels[q[j] & 0x0F]);
            out[32 * b + j + 16] = dl * static_cast<float>(kIq4NlLevels[q[j] >> 4]);
        }
    }
}

void dequantizeQ4_K(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const float dmin = loadHalf(block + 2);
    const std::uint8_t* scales = block + 4;
    const std::uint8_t* qs = block + 16;
    // Four chunks of 64: the low nibbles of 32 bytes are one sub-block, the high nibbles
    // the next.
    for (int chunk = 0; chunk < 4; ++chunk) {
        std::uint8_t sc0, m0, sc1, m1;
        scaleAndMin(scales, 2 * chunk, sc0, m0);
        scaleAndMin(scales, 2 * chunk + 1, sc1, m1);
        const float d0 = d * sc0, min0 = dmin * m0;
        const float d1 = d * sc1, min1 = dmin * m1;
        const std::uint8_t* q = qs + 32 * chunk;
        float* y = out + 64 * chunk;
        for (int l = 0; l < 32; ++l) y[l] = d0 * static_cast<float>(q[l] & 0x0F) - min0;
        for (int l = 0; l < 32; ++l) y[32 + l] = d1 * static_cast<float>(q[l] >> 4) - min1;
    }
}

void dequantizeQ5_K(const std::uint8_t* block, float* out) {
    const float d = loadHalf(block);
    const float dmin = loadHalf(block + 2);
    const std::uint8_t* scales = block + 4;
    const std::uint8_t* qh = block + 16; // bit s of qh[l]: fifth bit of element l of sub-block s
    const std::uint8_t* qs = block + 48;
    for (int chunk = 0; chunk < 4; ++chunk) {
        std::uint8_t sc0, m0, sc1, m1;
        scaleAndMin(scales, 2 * chunk, sc0, m0);
        scaleAndMin(scales, 2 * chunk + 1, sc1, m1);
        const float d0 = d * sc0, min0 = dmin * m0;
        const float d1 = d * sc1, min1 = dmin * m1;
        const int bit0 = 2 * chunk, bit1 = 2 * chunk + 1;
        const std::uint8_t* q = qs + 32 * chunk;
        float* y = out + 64 * chunk;
        for (int l = 0; l < 32; ++l) {
            const int high = (qh[l] >> bit0) & 1;
            y[l] = d0 * static_cast<float>((q[l] & 0x0F) | (high << 4)) - min0;
        }
        for (int l = 0; l < 32; ++l) {
            const int high = (qh[l] >> bit1) & 1;
            y[32 + l] = d1 * static_cast<float>((q[l] >> 4) | (high << 4)) - min1;
        }
    }
}

void dequantizeQ6_K(const std::uint8_t* block, float* out) {
    const std::uint8_t* ql = block;
    const std::uint8_t* qh = block + 128;
    const std::uint8_t* scaleBytes = block + 192;
    const float d = loadHalf(block + 208);
    // Two halves of 128 elements; each uses 64 bytes of ql, 32 of qh and 8 scales (one per 16).
    for (int half = 0; half < 2; ++half) {
        const std::uint8_t* low = ql + 64 * half;
        const std::uint8_t* high = qh + 32 * half;
        const std::int8_t* sc = reinterpret_cast<const std::int8_t*>(scaleBytes) + 8 * half;
        float* y = out + 128 * half;
        for (int l = 0; l < 32; ++l) {
            const int s = l / 16;
            const int q0 = ((low[l] & 0x0F) | (((high[l] >> 0) & 3) << 4)) - 32;
            const int q1 = ((low[l + 32] & 0x0F) | (((high[l] >> 2) & 3) << 4)) - 32;
            const int q2 = ((low[l] >> 4) | (((high[l] >> 4) & 3) << 4)) - 32;
            const int q3 = ((low[l + 32] >> 4) | (((high[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * static_cast<float>(sc[s + 0]) * static_cast<float>(q0);
            y[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q1);
            y[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q2);
            y[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q3);
        }
    }
}

} // namespace

std::optional<TensorTypeTraits> tensorTypeTraits(std::uint32_t rawType) {
    switch (static_cast<TensorType>(rawType)) {
    case TensorType::F32:
        return traitsF32;
    case TensorType::F16:
        return traitsF16;
    case TensorType::BF16:
        return traitsBF16;
    case TensorType::Q4_0:
        return traitsQ4_0;
    case TensorType::Q4_1:
        return traitsQ4_1;
    case TensorType::Q8_0:
        return traitsQ8_0;
    case TensorType::Q5_0:
        return traitsQ5_0;
    case TensorType::Q5_1:
        return traitsQ5_1;
    case TensorType::Q2_K:
        return traitsQ2_K;
    case TensorType::Q3_K:
        return traitsQ3_K;
    case TensorType::IQ4_NL:
        return traitsIQ4_NL;
    case TensorType::IQ4_XS:
        return traitsIQ4_XS;
    case TensorType::Q4_K:
        return traitsQ4_K;
    case TensorType::Q5_K:
        return traitsQ5_K;
    case TensorType::Q6_K:
        return traitsQ6_K;
    }
    return std::nullopt;
}

TensorTypeTraits tensorTypeTraits(TensorType type) {
    auto traits = tensorTypeTraits(static_cast<std::uint32_t>(type));
    if (!traits)
        throw ModelError("unsupported tensor type " +
                         describeTensorType(static_cast<std::uint32_t>(type)));
    return *traits;
}

std::span<const TensorType> supportedTensorTypes() {
    static constexpr TensorType types[] = {
        TensorType::F32,    TensorType::F16,    TensorType::Q4_0, TensorType::Q4_1,
        TensorType::Q5_0,   TensorType::Q5_1,   TensorType::Q8_0, TensorType::Q2_K,
        TensorType::Q3_K,   TensorType::Q4_K,   TensorType::Q5_K, TensorType::Q6_K,
        TensorType::IQ4_NL, TensorType::IQ4_XS, TensorType::BF16};
    return types;
}

std::string describeTensorType(std::uint32_t rawType) {
    if (auto traits = tensorTypeTraits(rawType)) return std::string(traits->name);
    // ggml's numbering (ggml.h): the types this reader does not read, by name.
    static constexpr std::pair<std::uint32_t, std::string_view> others[] = {
        {4, "Q4_2 (removed from ggml)"},
        {5, "Q4_3 (removed from ggml)"},
        {9, "Q8_1"},
        {15, "Q8_K"},
        {16, "IQ2_XXS"},
        {17, "IQ2_XS"},
        {18, "IQ3_XXS"},
        {19, "IQ1_S"},
        {21, "IQ3_S"},
        {22, "IQ2_S"},
        {24, "I8"},
        {25, "I16"},
        {26, "I32"},
        {27, "I64"},
        {28, "F64"},
        {29, "IQ1_M"},
        {31, "Q4_0_4_4 (removed from ggml)"},
        {32, "Q4_0_4_8 (removed from ggml)"},
        {33, "Q4_0_8_8 (removed from ggml)"},
        {34, "TQ1_0"},
        {35, "TQ2_0"},
        {36, "IQ4_NL_4_4 (removed from ggml)"},
        {37, "IQ4_NL_4_8 (removed from ggml)"},
        {38, "IQ4_NL_8_8 (removed from ggml)"},
        {39, "MXFP4"},
        {40, "NVFP4"},
        {41, "Q1_0"},
        {42, "Q2_0"}};
    for (const auto& [number, name] : others)
        if (number == rawType)
            return std::string(name) + " (GGUF type " + std::to_string(rawType) + ")";
    return "GGUF type " + std::to_string(rawType) + " (not a ggml type)";
}

std::string_view tensorTypeName(TensorType type) {
    auto traits = tensorTypeTraits(static_cast<std::uint32_t>(type));
    return traits ? traits->name : std::string_view("unknown");
}

std::optional<std::uint64_t> tensorBytes(TensorType type, std::uint64_t elements) {
    auto traits = tensorTypeTraits(static_cast<std::uint32_t>(type));
    if (!traits || elements % traits->blockElements != 0) return std::nullopt;
    const std::uint64_t blocks = elements / traits->blockElements;
    if (blocks > std::numeric_limits<std::uint64_t>::max() / traits->blockBytes)
        return std::nullopt;
    return blocks * traits->blockBytes;
}

void dequantize(TensorType type, std::span<const std::uint8_t> src, std::span<float> dst) {
    const TensorTypeTraits traits = tensorTypeTraits(type);
    const auto needed = tensorBytes(type, dst.size());
    if (!needed || src.size() < *needed)
        throw ModelError("dequantize " + std::string(traits.name) + ": " +
                         std::to_string(dst.size()) + " elements need " +
                         (needed ? std::to_string(*needed) : std::string("whole blocks")) +
                         " bytes, got " + std::to_string(src.size()));
    const std::uint8_t* in = src.data();
    float* out = dst.data();
    const std::size_t blocks = dst.size() / traits.blockElements;
    switch (type) {
    case TensorType::F32:
        for (std::size_t i = 0; i < blocks; ++i) out[i] = loadF32(in + 4 * i);
        return;
    case TensorType::F16:
        for (std::size_t i = 0; i < blocks; ++i) out[i] = halfToFloat(loadU16(in + 2 * i));
        return;
    case TensorType::BF16:
        for (std::size_t i = 0; i < blocks; ++i) out[i] = bf16ToFloat(loadU16(in + 2 * i));
        return;
    default:
        break;
    }
    void (*blockFunction)(const std::uint8_t*, float*) = nullptr;
    switch (type) {
    case TensorType::Q4_0:
        blockFunction = dequantizeQ4_0;
        break;
    case TensorType::Q4_1:
        blockFunction = dequantizeQ4_1;
        break;
    case TensorType::Q8_0:
        blockFunction = dequantizeQ8_0;
        break;
    case TensorType::Q4_K:
        blockFunction = dequantizeQ4_K;
        break;
    case TensorType::Q5_K:
        blockFunction = dequantizeQ5_K;
        break;
    case TensorType::Q6_K:
        blockFunction = dequantizeQ6_K;
        break;
    case TensorType::Q5_0:
        blockFunction = dequantizeQ5_0;
        break;
    case TensorType::Q5_1:
        blockFunction = dequantizeQ5_1;
        break;
    case TensorType::Q2_K:
        blockFunction = dequantizeQ2_K;
        break;
    case TensorType::Q3_K:
        blockFunction = dequantizeQ3_K;
        break;
    case TensorType::IQ4_NL:
        blockFunction = dequantizeIQ4_NL;
        break;
    case TensorType::IQ4_XS:
        blockFunction = dequantizeIQ4_XS;
        break;
    default:
        throw ModelError("dequantize: unsupported tensor type " +
                         describeTensorType(static_cast<std::uint32_t>(type)));
    }
    for (std::size_t b = 0; b < blocks; ++b)
        blockFunction(in + b * traits.blockBytes, out + b * traits.blockElements);
}

float bf16ToFloat(std::uint16_t b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t floatToBf16(float f) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    if ((bits & 0x7FFFFFFF) > 0x7F800000) return static_cast<std::uint16_t>((bits >> 16) | 0x0040);
    const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

} // namespace inferscope::models
