#include "models/formats/FiniteWeights.hpp"

#include "models/ModelError.hpp"

#include <cstring>
#include <span>

namespace inferscope::models {

namespace {

std::uint16_t loadU16(const std::uint8_t* p) {
    std::uint16_t value;
    std::memcpy(&value, p, sizeof value);
    return value;
}
std::uint32_t loadU32(const std::uint8_t* p) {
    std::uint32_t value;
    std::memcpy(&value, p, sizeof value);
    return value;
}

// Exponent all ones: Inf (mantissa 0) or NaN.
std::string halfKind(std::uint16_t h) {
    return (h & 0x03ffu) ? "NaN" : (h & 0x8000u) ? "-Inf" : "+Inf";
}
bool halfIsFinite(std::uint16_t h) {
    return (h & 0x7c00u) != 0x7c00u;
}

// Where a block format keeps its f16 scales: offsets inside one block.
struct ScaleLayout {
    std::uint32_t offsets[2];
    std::uint32_t count;
};

std::optional<ScaleLayout> scaleLayout(TensorType type) {
    switch (type) {
    case TensorType::Q4_0:
        return ScaleLayout{{0, 0}, 1}; // d, 16 bytes of nibbles
    case TensorType::Q8_0:
        return ScaleLayout{{0, 0}, 1}; // d, 32 int8
    case TensorType::Q4_1:
        return ScaleLayout{{0, 2}, 2}; // d, m, nibbles
    case TensorType::Q4_K:
        return ScaleLayout{{0, 2}, 2}; // d, dmin, 6-bit scales, nibbles
    case TensorType::Q5_K:
        return ScaleLayout{{0, 2}, 2}; // d, dmin, scales, high bits, nibbles
    case TensorType::Q6_K:
        return ScaleLayout{{208, 0}, 1}; // ql, qh, int8 scales, then d
    case TensorType::Q5_0:
        return ScaleLayout{{0, 0}, 1}; // d, fifth bits, nibbles
    case TensorType::Q5_1:
        return ScaleLayout{{0, 2}, 2}; // d, m, fifth bits, nibbles
    case TensorType::IQ4_NL:
        return ScaleLayout{{0, 0}, 1}; // d, codebook nibbles
    case TensorType::IQ4_XS:
        return ScaleLayout{{0, 0}, 1}; // d, 6-bit scales, codebook nibbles
    case TensorType::Q2_K:
        return ScaleLayout{{80, 82}, 2}; // scales, 2-bit quants, then d and dmin
    case TensorType::Q3_K:
        return ScaleLayout{{108, 0}, 1}; // high bits, 2-bit quants, scales, then d
    default:
        return std::nullopt;
    }
}

} // namespace

std::optional<NonFiniteValue> findNonFinite(const StoredTensor& tensor) {
    const std::uint8_t* data = tensor.data.data();
    const std::size_t bytes = tensor.data.size();
    switch (tensor.type) {
    case TensorType::F32:
        for (std::size_t at = 0; at + 4 <= bytes; at += 4) {
            const std::uint32_t bits = loadU32(data + at);
            if ((bits & 0x7f800000u) == 0x7f800000u)
                return NonFiniteValue{at, "element " + std::to_string(at / 4) + " is " +
                                              ((bits & 0x007fffffu) ? "NaN"
                                               : (bits >> 31)       ? "-Inf"
                                                                    : "+Inf")};
        }
        return std::nullopt;
    case TensorType::F16:
        for (std::size_t at = 0; at + 2 <= bytes; at += 2) {
            const std::uint16_t bits = loadU16(data + at);
            if (!halfIsFinite(bits))
                return NonFiniteValue{at, "element " + std::to_string(at / 2) + " is " +
                                              halfKind(bits)};
        }
        return std::nullopt;
    case TensorType::BF16:
        for (std::size_t at = 0; at + 2 <= bytes; at += 2) {
            const std::uint16_t bits = loadU16(data + at);
            if ((bits & 0x7f80u) == 0x7f80u)
                return NonFiniteValue{at, "element " + std::to_string(at / 2) + " is " +
                                              ((bits & 0x007fu) ? "NaN"
                                               : (bits >> 15)   ? "-Inf"
                                                                : "+Inf")};
        }
        return std::nullopt;
    default:
        break;
    }
    const auto layout = scaleLayout(tensor.type);
    if (!layout) return std::nullopt;
    const std::uint32_t blockBytes = tensorTypeTraits(tensor.type).blockBytes;
    for (std::size_t block = 0; (block + 1) * blockBytes <= bytes; ++block) {
        for (std::uint32_t s = 0; s < layout->count; ++s) {
            const std::size_t at = block * blockBytes + layout->offsets[s];
            const std::uint16_t bits = loadU16(data + at);
            if (!halfIsFinite(bits))
                return NonFiniteValue{at, "block " + std::to_string(block) + "'s " +
                                              (s == 0 ? "scale" : "minimum") + " is " +
                                              halfKind(bits)};
        }
    }
    return std::nullopt;
}

void requireFiniteWeights(const WeightStore& weights, const std::string& file) {
    for (const auto& [name, tensor] : weights.tensors()) {
        if (const auto bad = findNonFinite(tensor))
            throw ModelError(file, name, tensor.fileOffset + bad->byteOffset,
                             bad->what + ": a model with non-finite weights computes NaN "
                                         "logits and generates nonsense");
    }
}

} // namespace inferscope::models
