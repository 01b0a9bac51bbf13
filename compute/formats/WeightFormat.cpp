#include "compute/formats/WeightFormat.hpp"

#include "compute/formats/DeviceCodeLayout.hpp"
#include "compute/formats/GpuWeightPacking.hpp"

#include <algorithm>
#include <vector>

namespace inferscope::compute {

namespace {

using models::QuantScheme;
using models::TensorType;

// The weight formats. The names of lab schemes are models::QuantSchemeSpec::name()'s (a test
// checks they agree); the shader stems are the build's dequant_<shader>.glsl (a test checks
// every kernel variant is embedded).
const WeightFormatInfo kFormats[] = {
    // format, name, alias, shader, bits, row scale bits, packer, lab scheme, stored type, aligned,
    // int8 activation path
    {WeightFormat::F32, "fp32", "f32", "f32", 32.0, 0.0, WeightPacker::Float32,
     models::QuantSchemeSpec{QuantScheme::Fp32, 0}, TensorType::F32, false, false},
    {WeightFormat::F16, "fp16", "f16", "f16", 16.0, 0.0, WeightPacker::Float16,
     models::QuantSchemeSpec{QuantScheme::Fp16, 0}, TensorType::F16, false, false},
    {WeightFormat::Int8Tensor, "int8-tensor", "", "int8_tensor", 8.0, 16.0, WeightPacker::LabScheme,
     models::QuantSchemeSpec{QuantScheme::Int8PerTensor, 0}, std::nullopt, false, false},
    {WeightFormat::Int8Row, "int8-row", "", "int8_row", 8.0, 16.0, WeightPacker::LabScheme,
     models::QuantSchemeSpec{QuantScheme::Int8PerRow, 0}, std::nullopt, false, false},
    {WeightFormat::Int4Tensor, "int4-tensor", "", "int4_tensor", 4.0, 16.0, WeightPacker::LabScheme,
     models::QuantSchemeSpec{QuantScheme::Int4PerTensor, 0}, std::nullopt, false, true},
    {WeightFormat::Int4Row, "int4-row", "", "int4_row", 4.0, 16.0, WeightPacker::LabScheme,
     models::QuantSchemeSpec{QuantScheme::Int4PerRow, 0}, std::nullopt, false, true},
    {WeightFormat::Int4G128, "int4-g128", "int4-group", "int4_g128", 4.0 + 16.0 / 128, 0.0,
     WeightPacker::LabScheme, models::QuantSchemeSpec{QuantScheme::Int4PerGroup, 128}, std::nullopt,
     true, true},
    {WeightFormat::Int4G64, "int4-g64", "", "int4_g64", 4.0 + 16.0 / 64, 0.0,
     WeightPacker::LabScheme, models::QuantSchemeSpec{QuantScheme::Int4PerGroup, 64}, std::nullopt,
     true, true},
    {WeightFormat::Nf4, "nf4-b64", "nf4", "nf4", 4.0 + 16.0 / 64, 0.0, WeightPacker::LabScheme,
     models::QuantSchemeSpec{QuantScheme::Nf4, 64}, std::nullopt, true, false},
    // GGUF's Q8_0 with the scale widened to f32 (the file's fp16 scales convert exactly).
    {WeightFormat::Q8_0, "q8_0", "", "q8_0", 8.0 + 32.0 / 32, 0.0, WeightPacker::GgmlBlocks,
     std::nullopt, TensorType::Q8_0, false, false},
    {WeightFormat::Q4_0, "q4_0", "", "q4_0", 4.0 + 16.0 / 32, 0.0, WeightPacker::GgmlBlocks,
     std::nullopt, TensorType::Q4_0, false, true},
    {WeightFormat::Q4_1, "q4_1", "", "q4_1", 4.0 + 32.0 / 32, 0.0, WeightPacker::GgmlBlocks,
     std::nullopt, TensorType::Q4_1, false, true},
    {WeightFormat::AsStored, "as-stored", "", "", 0.0, 0.0, WeightPacker::PerMatrix,
     models::QuantSchemeSpec{QuantScheme::AsStored, 0}, std::nullopt, false, false},
};

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
    // Plain floats: packed in slices, so a large matrix (the embedding table) never needs a
    // second full-size host copy.
    DeviceMatrix matrix;
    matrix.format = format;
    matrix.rows = rows;
    matrix.cols = cols;
    matrix.stride = paddedColumns(cols);
    matrix.rowBlock = rowBlock.value_or(codeRowBlockFor(context.info(), rows));
    const std::uint64_t rowWords = plainRowWords(format, cols), rowBytes = rowWords * 4;
    matrix.buffer = Buffer(context, rowBytes * rows, BufferKind::DeviceLocal, label);
    const auto rowsPerSlice = std::uint32_t(codeRowsPerUploadSlice(rowBytes, matrix.rowBlock));
    for (std::uint32_t first = 0; first < rows; first += rowsPerSlice) {
        const std::uint32_t count = std::min(rowsPerSlice, rows - first);
        const auto words = interleaveCodeRows(
            packPlainRows(format,
                          values.subspan(std::uint64_t(first) * cols, std::uint64_t(count) * cols),
                          cols),
            count, rowWords, matrix.rowBlock);
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
