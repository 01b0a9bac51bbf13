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
};

std::string_view weightFormatName(WeightFormat format); // "f32", "f16", "q8_0": shader suffix
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
};

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
