#pragma once
// How a weight matrix is stored on the GPU. Each format has a shaders/dequant_<name>.glsl
// include (one dequantize4 function) from which every matrix kernel is built, so a new
// format adds a host packer here and one include there; nothing else changes.
#include "compute/Buffer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace inferscope::compute {

enum class WeightFormat {
    F32,
    F16,
    Q8_0, // blocks of 32 signed bytes sharing one f32 scale (absmax / 127): 9 bits per weight
    // The quantization lab's schemes (models/WeightQuantizer, fp16 scales; layouts in
    // compute/GpuWeightPacking.hpp) and the GGUF 4-bit block types.
    Int8Tensor, // "int8-tensor": int8 codes, one scale per source tensor
    Int8Row,    // "int8-row": int8 codes, one scale per output row
    Int4Tensor, // "int4-tensor": 4-bit codes q + 8, one scale per source tensor
    Int4Row,    // "int4-row"
    Int4G128,   // "int4-g128": one scale per 128 consecutive weights
    Int4G64,    // "int4-g64"
    Nf4,        // "nf4": NF4 level indices, one absmax per 64 consecutive weights
    Q4_0,       // "q4_0": GGUF blocks of 32, (q - 8) * d
    Q4_1,       // "q4_1": GGUF blocks of 32, q * d + m
    // Not a GPU layout: the engine picks, per matrix, the format of the file's own type
    // (Q4_0 / Q4_1 / Q8_0 / F16 / F32 from the file's bytes; other types fall back to F16).
    AsStored, // "as-stored"
};

// Every GPU layout (AsStored excluded), in the chapter's order.
std::span<const WeightFormat> allWeightFormats();
// Shader file suffix (names with '-' are not valid in file stems embedded as identifiers).
std::string_view weightFormatShaderSuffix(WeightFormat format);

// "f32", "f16", "q8_0", "int8-tensor", ... (the lab's scheme names, models/WeightQuantizer).
std::string_view weightFormatName(WeightFormat format);
// Also accepts the lab's aliases: "fp32", "fp16", "int4-group" (g128), "nf4-b64".
std::optional<WeightFormat> weightFormatFromName(std::string_view name);
// Bytes a row of `cols` weights takes on the GPU (rows are padded to a multiple of 4).
std::uint64_t weightRowBytes(WeightFormat format, std::uint32_t cols);
// Rows (of weights and of activations) are zero-padded to a multiple of 64 elements, so
// every kernel variant can step through them in whole chunks (e.g. 4 x 16 lanes).
constexpr std::uint32_t kColumnPadding = 64;
inline std::uint32_t paddedColumns(std::uint32_t cols) {
    return (cols + kColumnPadding - 1) / kColumnPadding * kColumnPadding;
}

// A row-major [rows][cols] matrix on the GPU, each row zero-padded to `stride` elements.
struct DeviceMatrix {
    Buffer buffer;
    WeightFormat format = WeightFormat::F32;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t stride = 0;
    std::uint32_t formatWords = 0; // block formats: the word where the scales start
    // Group formats: rows of a multiple of 64 weights (no padding, groups aligned to the
    // kernels' chunks), read by the "_aligned" shader variants.
    bool alignedGroups = false;
    std::uint64_t bytes() const { return buffer.size(); }
};

// The shader name suffix of the kernels that read this matrix.
std::string matrixShaderSuffix(const DeviceMatrix& matrix);

// Packs f32 rows into `format` and uploads them.
DeviceMatrix uploadMatrix(const VulkanContext& context, std::span<const float> values,
                          std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                          const std::string& label);

// The values the GPU will compute with after packing into `format` (for CPU oracles):
// f16 rounding, or Q8_0 quantization and back. Rows of `cols` values.
std::vector<float> roundTripWeights(std::span<const float> values, std::uint32_t cols,
                                    WeightFormat format);

// A vector of floats zero-padded to a multiple of 4 (norm weights, biases, frequencies).
Buffer uploadVector(const VulkanContext& context, std::span<const float> values,
                    const std::string& label);

} // namespace inferscope::compute
