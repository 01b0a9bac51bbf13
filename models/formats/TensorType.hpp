#pragma once
// Element types of stored tensors (numbered as GGUF numbers them) and their block layout.
#include "models/formats/HalfFloat.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace inferscope::models {

enum class TensorType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
};

struct TensorTypeTraits {
    std::string_view name;
    std::uint32_t blockElements; // elements per block (1 for plain floats)
    std::uint32_t blockBytes;    // bytes per block
};

// Traits of a supported type, or nullopt for a number this reader does not know.
std::optional<TensorTypeTraits> tensorTypeTraits(std::uint32_t rawType);
TensorTypeTraits tensorTypeTraits(TensorType type);
std::string_view tensorTypeName(TensorType type);
// Every supported type, in GGUF's numbering order.
std::span<const TensorType> supportedTensorTypes();
// A GGUF type number as people know it: "Q5_0", or for a type ggml defines that this reader
// does not read "IQ2_XXS (GGUF type 16)", and "GGUF type 99 (not a ggml type)" for a number
// ggml never assigned. Messages about a file's types use it, so none names a number alone.
std::string describeTensorType(std::uint32_t rawType);

// The IQ4_NL / IQ4_XS codebook: code q (0..15) stands for kIq4NlLevels[q] times the scale.
inline constexpr std::int8_t kIq4NlLevels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                 1,    13,   25,  38,  53,  69,  89,  113};

// Bytes taken by n elements (n must be a multiple of the block size; nullopt otherwise
// or on overflow).
std::optional<std::uint64_t> tensorBytes(TensorType type, std::uint64_t elements);

// Dequantizes n elements (a multiple of the block size) from src to f32 exactly as the
// format defines them. src must hold tensorBytes(type, n) bytes.
void dequantize(TensorType type, std::span<const std::uint8_t> src, std::span<float> dst);

// bfloat16 conversions (the IEEE half codec is models/formats/HalfFloat.hpp, included above).
float bf16ToFloat(std::uint16_t b);
std::uint16_t floatToBf16(float f); // round to nearest even

} // namespace inferscope::models
