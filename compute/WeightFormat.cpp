#include "compute/WeightFormat.hpp"

#include "compute/GpuWeightPacking.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace inferscope::compute {

namespace {
// IEEE half, round to nearest even (kept here so compute/ packs without the models/ codecs).
std::uint16_t toHalf(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const std::uint32_t exponent = (bits >> 23) & 0xffu;
    std::uint32_t mantissa = bits & 0x7fffffu;
    if (exponent == 0xffu) return std::uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    const int e = int(exponent) - 127 + 15;
    if (e >= 31) return std::uint16_t(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return std::uint16_t(sign);
        mantissa |= 0x800000u;
        const int shift = 14 - e;
        std::uint32_t half = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1);
        const std::uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
        return std::uint16_t(sign | half);
    }
    std::uint32_t half = (std::uint32_t(e) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half; // may carry into exponent
    return std::uint16_t(sign | half);
}
float halfToFloatLocal(std::uint16_t half) {
    const std::uint32_t sign = std::uint32_t(half & 0x8000u) << 16;
    const std::uint32_t exponent = (half >> 10) & 0x1fu;
    const std::uint32_t mantissa = half & 0x3ffu;
    if (exponent == 0) {
        const float magnitude = float(mantissa) * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
} // namespace

std::string_view weightFormatName(WeightFormat format) {
    switch (format) {
    case WeightFormat::F32:
        return "f32";
    case WeightFormat::F16:
        return "f16";
    case WeightFormat::Q8_0:
        return "q8_0";
    case WeightFormat::Int8Tensor:
        return "int8-tensor";
    case WeightFormat::Int8Row:
        return "int8-row";
    case WeightFormat::Int4Tensor:
        return "int4-tensor";
    case WeightFormat::Int4Row:
        return "int4-row";
    case WeightFormat::Int4G128:
        return "int4-g128";
    case WeightFormat::Int4G64:
        return "int4-g64";
    case WeightFormat::Nf4:
        return "nf4";
    case WeightFormat::Q4_0:
        return "q4_0";
    case WeightFormat::Q4_1:
        return "q4_1";
    case WeightFormat::AsStored:
        return "as-stored";
    }
    return "?";
}

std::span<const WeightFormat> allWeightFormats() {
    static constexpr WeightFormat formats[] = {
        WeightFormat::F32,      WeightFormat::F16,        WeightFormat::Int8Tensor,
        WeightFormat::Int8Row,  WeightFormat::Int4Tensor, WeightFormat::Int4Row,
        WeightFormat::Int4G128, WeightFormat::Int4G64,    WeightFormat::Nf4,
        WeightFormat::Q8_0,     WeightFormat::Q4_0,       WeightFormat::Q4_1};
    return formats;
}

std::string_view weightFormatShaderSuffix(WeightFormat format) {
    switch (format) {
    case WeightFormat::Int8Tensor:
        return "int8_tensor";
    case WeightFormat::Int8Row:
        return "int8_row";
    case WeightFormat::Int4Tensor:
        return "int4_tensor";
    case WeightFormat::Int4Row:
        return "int4_row";
    case WeightFormat::Int4G128:
        return "int4_g128";
    case WeightFormat::Int4G64:
        return "int4_g64";
    default:
        return weightFormatName(format);
    }
}

std::string matrixShaderSuffix(const DeviceMatrix& matrix) {
    return std::string(weightFormatShaderSuffix(matrix.format)) +
           (matrix.alignedGroups ? "_aligned" : "");
}

std::optional<WeightFormat> weightFormatFromName(std::string_view name) {
    if (name == "fp32") return WeightFormat::F32;
    if (name == "fp16") return WeightFormat::F16;
    if (name == "int4-group") return WeightFormat::Int4G128;
    if (name == "nf4-b64") return WeightFormat::Nf4;
    if (name == "as-stored") return WeightFormat::AsStored;
    for (auto format : allWeightFormats()) {
        if (weightFormatName(format) == name) return format;
    }
    return std::nullopt;
}

std::uint64_t weightRowBytes(WeightFormat format, std::uint32_t cols) {
    const std::uint64_t padded = paddedColumns(cols);
    switch (format) {
    case WeightFormat::F32:
        return padded * 4;
    case WeightFormat::F16:
        return padded * 2;
    case WeightFormat::Q8_0:
        return padded + padded / 32 * 4;
    case WeightFormat::Int8Tensor:
    case WeightFormat::Int8Row:
        return padded + 2; // codes + the row's fp16 scale
    case WeightFormat::Int4Tensor:
    case WeightFormat::Int4Row:
        return padded / 2 + 2;
    case WeightFormat::Int4G128:
        return padded / 2 + (cols + 127) / 128 * 2; // about: groups may cross rows
    case WeightFormat::Int4G64:
    case WeightFormat::Nf4:
        return padded / 2 + (cols + 63) / 64 * 2;
    case WeightFormat::Q4_0:
        return padded / 2 + padded / 32 * 2;
    case WeightFormat::Q4_1:
        return padded / 2 + padded / 32 * 4;
    case WeightFormat::AsStored:
        break;
    }
    return 0;
}

DeviceMatrix uploadMatrix(const VulkanContext& context, std::span<const float> values,
                          std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                          const std::string& label) {
    if (values.size() != std::uint64_t(rows) * cols) {
        throw ComputeError("matrix '" + label + "' has " + std::to_string(values.size()) +
                           " values, expected " + std::to_string(rows) + " x " +
                           std::to_string(cols));
    }
    if (format != WeightFormat::F32 && format != WeightFormat::F16 &&
        format != WeightFormat::Q8_0) {
        const MatrixPart part{values, rows, nullptr};
        return uploadPacked(context, packForGpu(format, std::span(&part, 1), cols), label);
    }
    DeviceMatrix matrix;
    matrix.format = format;
    matrix.rows = rows;
    matrix.cols = cols;
    matrix.stride = paddedColumns(cols);
    const std::uint64_t rowBytes = weightRowBytes(format, cols);
    matrix.buffer = Buffer(context, rowBytes * rows, BufferKind::DeviceLocal, label);
    // Pack in slices so a large matrix never needs a second full-size host copy.
    const std::uint32_t rowsPerSlice =
        std::max<std::uint32_t>(1, std::uint32_t((8u << 20) / rowBytes));
    for (std::uint32_t first = 0; first < rows; first += rowsPerSlice) {
        const std::uint32_t count = std::min(rowsPerSlice, rows - first);
        if (format == WeightFormat::Q8_0) break; // packed below, whole
        if (format == WeightFormat::F32) {
            std::vector<float> packed(std::uint64_t(count) * matrix.stride, 0.0f);
            for (std::uint32_t r = 0; r < count; ++r) {
                std::copy_n(values.data() + std::uint64_t(first + r) * cols, cols,
                            packed.data() + std::uint64_t(r) * matrix.stride);
            }
            matrix.buffer.upload(std::span<const float>(packed), first * rowBytes);
        } else {
            std::vector<std::uint16_t> packed(std::uint64_t(count) * matrix.stride, 0);
            for (std::uint32_t r = 0; r < count; ++r) {
                const float* source = values.data() + std::uint64_t(first + r) * cols;
                std::uint16_t* target = packed.data() + std::uint64_t(r) * matrix.stride;
                for (std::uint32_t c = 0; c < cols; ++c) target[c] = toHalf(source[c]);
            }
            matrix.buffer.upload(std::span<const std::uint16_t>(packed), first * rowBytes);
        }
    }
    if (format == WeightFormat::Q8_0) {
        // Quants of every row first, then the scales (the shader finds them at formatWords).
        const std::uint32_t blocks = matrix.stride / 32;
        std::vector<std::int8_t> quants(std::uint64_t(rows) * matrix.stride, 0);
        std::vector<float> scales(std::uint64_t(rows) * blocks, 0.0f);
        for (std::uint32_t r = 0; r < rows; ++r) {
            const float* source = values.data() + std::uint64_t(r) * cols;
            for (std::uint32_t b = 0; b < blocks; ++b) {
                float absMax = 0.0f;
                for (std::uint32_t i = b * 32; i < std::min(cols, b * 32 + 32); ++i)
                    absMax = std::max(absMax, std::abs(source[i]));
                const float scale = absMax / 127.0f;
                scales[std::uint64_t(r) * blocks + b] = scale;
                if (scale == 0.0f) continue;
                for (std::uint32_t i = b * 32; i < std::min(cols, b * 32 + 32); ++i) {
                    const float q = std::round(source[i] / scale);
                    quants[std::uint64_t(r) * matrix.stride + i] =
                        std::int8_t(std::clamp(q, -127.0f, 127.0f));
                }
            }
        }
        matrix.formatWords = std::uint32_t(quants.size() / 4);
        matrix.buffer.upload(std::span<const std::int8_t>(quants));
        matrix.buffer.upload(std::span<const float>(scales), quants.size());
    }
    return matrix;
}

std::vector<float> roundTripWeights(std::span<const float> values, std::uint32_t cols,
                                    WeightFormat format) {
    if (format != WeightFormat::F32 && format != WeightFormat::F16 &&
        format != WeightFormat::Q8_0) {
        return referenceDequantized(format, values, cols ? std::uint32_t(values.size() / cols) : 0,
                                    cols);
    }
    std::vector<float> result(values.begin(), values.end());
    if (format == WeightFormat::F16) {
        for (auto& v : result) v = halfToFloatLocal(toHalf(v));
    } else if (format == WeightFormat::Q8_0) {
        for (std::size_t row = 0; row * cols < result.size(); ++row) {
            for (std::uint32_t b = 0; b < cols; b += 32) {
                float* block = result.data() + row * cols + b;
                const std::uint32_t n = std::min(32u, cols - b);
                float absMax = 0.0f;
                for (std::uint32_t i = 0; i < n; ++i) absMax = std::max(absMax, std::abs(block[i]));
                const float scale = absMax / 127.0f;
                for (std::uint32_t i = 0; i < n; ++i) {
                    block[i] =
                        scale == 0.0f
                            ? 0.0f
                            : std::clamp(std::round(block[i] / scale), -127.0f, 127.0f) * scale;
                }
            }
        }
    }
    return result;
}

Buffer uploadVector(const VulkanContext& context, std::span<const float> values,
                    const std::string& label) {
    std::vector<float> padded(paddedColumns(static_cast<std::uint32_t>(values.size())), 0.0f);
    std::copy(values.begin(), values.end(), padded.begin());
    if (padded.empty()) padded.resize(4, 0.0f);
    Buffer buffer(context, padded.size() * sizeof(float), BufferKind::DeviceLocal, label);
    buffer.upload(std::span<const float>(padded));
    return buffer;
}

} // namespace inferscope::compute
