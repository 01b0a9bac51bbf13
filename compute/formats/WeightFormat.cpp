#include "compute/formats/WeightFormat.hpp"

#include "compute/formats/DeviceCodeLayout.hpp"
#include "compute/formats/GpuWeightPacking.hpp"

#include <algorithm>
#include <vector>

namespace inferscope::compute {

namespace {

using models::QuantScheme;
using models::TensorType;

// The rows of compute/formats/WeightFormatTable.def, in its order.
// clang-format off
#define WEIGHT_FORMAT(format, shader, grouping, name, alias, bits, rowBits, packer, scheme,       \
                      stored, int8Path)                                                         \
    {WeightFormat::format, name, alias, #shader, bits, rowBits, WeightPacker::packer, scheme,    \
     stored, std::string_view(#grouping) == "ALIGNED", int8Path},
// clang-format on
const WeightFormatInfo kFormats[] = {
#include "compute/formats/WeightFormatTable.def"
};
#undef WEIGHT_FORMAT

} // namespace

std::span<const WeightFormatInfo> weightFormatTable() {
    return kFormats;
}

const WeightFormatInfo& weightFormatInfo(WeightFormat format) {
    for (const auto& info : kFormats)
        if (info.format == format) return info;
    throw ComputeError("unknown weight format " + std::to_string(int(format)));
}

const WeightFormatInfo* findWeightFormat(std::string_view name) {
    for (const auto& info : kFormats)
        if (info.name == name || (!info.alias.empty() && info.alias == name)) return &info;
    return nullptr;
}

std::string weightFormatNames() {
    std::string names;
    for (const auto& info : kFormats) names.append(names.empty() ? "" : ", ").append(info.name);
    return names;
}

std::span<const WeightFormat> allWeightFormats() {
    static const std::vector<WeightFormat> formats = [] {
        std::vector<WeightFormat> list;
        for (const auto& info : kFormats)
            if (info.packer != WeightPacker::PerMatrix) list.push_back(info.format);
        return list;
    }();
    return formats;
}

std::string_view weightFormatName(WeightFormat format) {
    return weightFormatInfo(format).name;
}

std::string_view weightFormatShaderSuffix(WeightFormat format) {
    return weightFormatInfo(format).shader;
}

std::optional<WeightFormat> weightFormatFromName(std::string_view name) {
    const auto* info = findWeightFormat(name);
    return info ? std::optional(info->format) : std::nullopt;
}

std::string matrixShaderSuffix(const DeviceMatrix& matrix) {
    return std::string(weightFormatShaderSuffix(matrix.format)) +
           (matrix.alignedGroups ? "_aligned" : "");
}

DeviceMatrix uploadMatrix(const VulkanContext& context, std::span<const float> values,
                          std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                          const std::string& label, std::optional<std::uint32_t> rowBlock) {
    if (values.size() != std::uint64_t(rows) * cols) {
        throw ComputeError("matrix '" + label + "' has " + std::to_string(values.size()) +
                           " values, expected " + std::to_string(rows) + " x " +
                           std::to_string(cols));
    }
    const auto packer = weightFormatInfo(format).packer;
    if (packer != WeightPacker::Float32 && packer != WeightPacker::Float16) {
        const MatrixPart part{values, rows, nullptr};
        return uploadPacked(context, packForGpu(format, std::span(&part, 1), cols), label,
                            rowBlock);
    }
    return uploadPlainMatrixRows(
        context,
        [&](std::uint32_t first, std::span<float> out) {
            const auto from = values.subspan(std::uint64_t(first) * cols, out.size());
            std::copy(from.begin(), from.end(), out.begin());
        },
        rows, cols, format, label, rowBlock);
}

DeviceMatrix uploadPlainMatrixRows(const VulkanContext& context, const MatrixRowSource& fillRows,
                                   std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                                   const std::string& label,
                                   std::optional<std::uint32_t> rowBlock) {
    const auto packer = weightFormatInfo(format).packer;
    if (packer != WeightPacker::Float32 && packer != WeightPacker::Float16)
        throw ComputeError("matrix '" + label + "': rows a slice at a time need f32 or f16, not " +
                           std::string(weightFormatName(format)));
    // Packed in slices, so a large matrix (the embedding table) never needs a second
    // full-size host copy.
    DeviceMatrix matrix;
    matrix.format = format;
    matrix.rows = rows;
    matrix.cols = cols;
    matrix.stride = paddedColumns(cols);
    matrix.rowBlock = rowBlock.value_or(codeRowBlockFor(context.info(), rows));
    const std::uint64_t rowWords = plainRowWords(format, cols), rowBytes = rowWords * 4;
    matrix.buffer = Buffer(context, rowBytes * rows, BufferKind::DeviceLocal, label);
    const auto rowsPerSlice = std::uint32_t(codeRowsPerUploadSlice(rowBytes, matrix.rowBlock));
    std::vector<float> slice;
    for (std::uint32_t first = 0; first < rows; first += rowsPerSlice) {
        const std::uint32_t count = std::min(rowsPerSlice, rows - first);
        slice.resize(std::uint64_t(count) * cols);
        fillRows(first, slice);
        const auto words = interleaveCodeRows(packPlainRows(format, slice, cols), count, rowWords,
                                              matrix.rowBlock);
        matrix.buffer.upload(std::span<const std::uint32_t>(words), first * rowBytes);
    }
    return matrix;
}

std::vector<float> roundTripWeights(std::span<const float> values, std::uint32_t cols,
                                    WeightFormat format) {
    return referenceDequantized(format, values, cols ? std::uint32_t(values.size() / cols) : 0,
                                cols);
}

std::uint64_t uploadedVectorBytes(std::uint64_t values) {
    return std::max<std::uint64_t>(paddedColumns(std::uint32_t(values)), 4) * sizeof(float);
}

Buffer uploadVector(const VulkanContext& context, std::span<const float> values,
                    const std::string& label) {
    std::vector<float> padded(uploadedVectorBytes(values.size()) / sizeof(float), 0.0f);
    std::copy(values.begin(), values.end(), padded.begin());
    Buffer buffer(context, padded.size() * sizeof(float), BufferKind::DeviceLocal, label);
    buffer.upload(std::span<const float>(padded));
    return buffer;
}

} // namespace inferscope::compute
