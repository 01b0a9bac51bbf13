#include "models/quant/GgmlQuantize.hpp"

#include "models/ModelError.hpp"
#include "models/quant/GgmlSuperBlocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace inferscope::models {

namespace {

constexpr std::size_t blockSize = kQ8_0Block;

void putHalf(std::uint8_t* out, float value) {
    const std::uint16_t bits = floatToHalf(value);
    out[0] = static_cast<std::uint8_t>(bits);
    out[1] = static_cast<std::uint8_t>(bits >> 8);
}

void quantizeBlockQ8_0(const float* x, std::uint8_t* out) {
    std::int8_t codes[blockSize];
    putHalf(out, quantizeQ8_0Block(std::span(x, blockSize), codes));
    std::memcpy(out + 2, codes, blockSize);
}

// Symmetric with 16 levels: the value of largest magnitude maps to -8, so d carries its
// sign; q = x / d + 8, rounded, kept within 0..15. Element j in the low nibble of byte j,
// element j + 16 in its high nibble.
void quantizeBlockQ4_0(const float* x, std::uint8_t* out) {
    float absMax = 0.0f, signedMax = 0.0f;
    for (std::size_t j = 0; j < blockSize; ++j)
        if (absMax < std::fabs(x[j])) {
            absMax = std::fabs(x[j]);
            signedMax = x[j];
        }
    const float d = signedMax / -8.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    for (std::size_t j = 0; j < blockSize / 2; ++j) {
        const int low = std::min(15, static_cast<int>(x[j] * inverse + 8.5f));
        const int high = std::min(15, static_cast<int>(x[j + blockSize / 2] * inverse + 8.5f));
        out[2 + j] = static_cast<std::uint8_t>(low | (high << 4));
    }
}

// Asymmetric: m = min, d = (max - min) / 15, q = (x - m) / d, rounded, within 0..15.
void quantizeBlockQ4_1(const float* x, std::uint8_t* out) {
    float minimum = std::numeric_limits<float>::max();
    float maximum = -std::numeric_limits<float>::max();
    for (std::size_t j = 0; j < blockSize; ++j) {
        minimum = std::min(minimum, x[j]);
        maximum = std::max(maximum, x[j]);
    }
    const float d = (maximum - minimum) / 15.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    putHalf(out + 2, minimum);
    for (std::size_t j = 0; j < blockSize / 2; ++j) {
        const int low = std::min(15, static_cast<int>((x[j] - minimum) * inverse + 0.5f));
        const int high =
            std::min(15, static_cast<int>((x[j + blockSize / 2] - minimum) * inverse + 0.5f));
        out[4 + j] = static_cast<std::uint8_t>(low | (high << 4));
    }
}

// Q5_0: as Q4_0 with 32 levels (the largest magnitude maps to -16); code j's fifth bit is
// bit j of the little-endian word after d.
void quantizeBlockQ5_0(const float* x, std::uint8_t* out) {
    float absMax = 0.0f, signedMax = 0.0f;
    for (std::size_t j = 0; j < blockSize; ++j)
        if (absMax < std::fabs(x[j])) {
            absMax = std::fabs(x[j]);
            signedMax = x[j];
        }
    const float d = signedMax / -16.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    std::uint32_t qh = 0;
    for (std::size_t j = 0; j < blockSize / 2; ++j) {
        const int low = std::min(31, static_cast<int>(x[j] * inverse + 16.5f));
        const int high = std::min(31, static_cast<int>(x[j + blockSize / 2] * inverse + 16.5f));
        out[6 + j] = static_cast<std::uint8_t>((low & 15) | ((high & 15) << 4));
        qh |= std::uint32_t(low >> 4) << j;
        qh |= std::uint32_t(high >> 4) << (j + 16);
    }
    std::memcpy(out + 2, &qh, 4); // little-endian host
}

// Q5_1: as Q4_1 with 32 levels.
void quantizeBlockQ5_1(const float* x, std::uint8_t* out) {
    float minimum = std::numeric_limits<float>::max();
    float maximum = -std::numeric_limits<float>::max();
    for (std::size_t j = 0; j < blockSize; ++j) {
        minimum = std::min(minimum, x[j]);
        maximum = std::max(maximum, x[j]);
    }
    const float d = (maximum - minimum) / 31.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    putHalf(out + 2, minimum);
    std::uint32_t qh = 0;
    for (std::size_t j = 0; j < blockSize / 2; ++j) {
        const int low = std::min(31, static_cast<int>((x[j] - minimum) * inverse + 0.5f));
        const int high =
            std::min(31, static_cast<int>((x[j + blockSize / 2] - minimum) * inverse + 0.5f));
        out[8 + j] = static_cast<std::uint8_t>((low & 15) | ((high & 15) << 4));
        qh |= std::uint32_t(low >> 4) << j;
        qh |= std::uint32_t(high >> 4) << (j + 16);
    }
    std::memcpy(out + 4, &qh, 4);
}

// IQ4_NL: d = (largest magnitude, signed) / -127, each value the nearest codebook level.
void quantizeBlockIQ4_NL(const float* x, std::uint8_t* out) {
    float absMax = 0.0f, signedMax = 0.0f;
    for (std::size_t j = 0; j < blockSize; ++j)
        if (absMax < std::fabs(x[j])) {
            absMax = std::fabs(x[j]);
            signedMax = x[j];
        }
    putHalf(out, signedMax / static_cast<float>(kIq4NlLevels[0]));
    const float d = halfToFloat(std::uint16_t(out[0] | (out[1] << 8)));
    for (std::size_t j = 0; j < blockSize / 2; ++j) {
        const int low = d != 0.0f ? superblocks::nearestIq4NlLevel(x[j] / d) : 8;
        const int high = d != 0.0f ? superblocks::nearestIq4NlLevel(x[j + blockSize / 2] / d) : 8;
        out[2 + j] = static_cast<std::uint8_t>(low | (high << 4));
    }
}

} // namespace

float quantizeQ8_0Block(std::span<const float> values, std::span<std::int8_t> codes) {
    if (values.size() > kQ8_0Block || codes.size() != values.size())
        throw ModelError("quantizeQ8_0Block: " + std::to_string(values.size()) + " values, " +
                         std::to_string(codes.size()) + " codes (at most one block of 32)");
    float absMax = 0.0f;
    for (float x : values) absMax = std::max(absMax, std::fabs(x));
    const float scale = absMax / 127.0f;
    for (std::size_t i = 0; i < values.size(); ++i) {
        codes[i] = scale == 0.0f
                       ? std::int8_t{0}
                       : std::int8_t(std::clamp(std::round(values[i] / scale), -127.0f, 127.0f));
    }
    return scale;
}

std::vector<std::uint8_t> quantizeGgml(TensorType type, std::span<const float> values) {
    void (*quantizeBlock)(const float*, std::uint8_t*) = nullptr;
    switch (type) {
    case TensorType::Q5_0:
        quantizeBlock = quantizeBlockQ5_0;
        break;
    case TensorType::Q5_1:
        quantizeBlock = quantizeBlockQ5_1;
        break;
    case TensorType::IQ4_NL:
        quantizeBlock = quantizeBlockIQ4_NL;
        break;
    case TensorType::Q2_K:
        quantizeBlock = superblocks::quantizeQ2_K;
        break;
    case TensorType::Q3_K:
        quantizeBlock = superblocks::quantizeQ3_K;
        break;
    case TensorType::Q4_K:
        quantizeBlock = superblocks::quantizeQ4_K;
        break;
    case TensorType::Q5_K:
        quantizeBlock = superblocks::quantizeQ5_K;
        break;
    case TensorType::Q6_K:
        quantizeBlock = superblocks::quantizeQ6_K;
        break;
    case TensorType::IQ4_XS:
        quantizeBlock = superblocks::quantizeIQ4_XS;
        break;
    case TensorType::Q8_0:
        quantizeBlock = quantizeBlockQ8_0;
        break;
    case TensorType::Q4_0:
        quantizeBlock = quantizeBlockQ4_0;
        break;
    case TensorType::Q4_1:
        quantizeBlock = quantizeBlockQ4_1;
        break;
    default:
        throw ModelError("quantizeGgml: " + std::string(tensorTypeName(type)) +
                         " is not a quantized block type");
    }
    const auto traits = tensorTypeTraits(type);
    if (values.size() % traits.blockElements != 0)
        throw ModelError("quantizeGgml: " + std::to_string(values.size()) +
                         " values are not whole " + std::string(traits.name) + " blocks of " +
                         std::to_string(traits.blockElements));
    const std::size_t blocks = values.size() / traits.blockElements;
    std::vector<std::uint8_t> out(blocks * traits.blockBytes);
    for (std::size_t b = 0; b < blocks; ++b)
        quantizeBlock(values.data() + b * traits.blockElements, out.data() + b * traits.blockBytes);
    return out;
}

} // namespace inferscope::models
