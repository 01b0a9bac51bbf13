#include "compute/formats/GpuWeightPacking.hpp"

#include "compute/formats/DeviceCodeLayout.hpp"
#include "compute/formats/GgmlPlanes.hpp"
#include "compute/formats/LaneScaleLayout.hpp"

#include "models/formats/TensorType.hpp"
#include "models/quant/GgmlQuantize.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

namespace inferscope::compute {

namespace {

constexpr std::uint32_t kGgmlBlock = 32;

std::uint16_t readU16(const std::uint8_t* bytes) {
    return std::uint16_t(bytes[0] | (std::uint16_t(bytes[1]) << 8));
}

// Byte-addressed writes into the word array (the host is little-endian, like SPIR-V).
struct WordWriter {
    std::vector<std::uint32_t>& words;
    std::uint8_t* bytes() { return reinterpret_cast<std::uint8_t*>(words.data()); }
    void setByte(std::uint64_t index, std::uint8_t value) { bytes()[index] = value; }
    void setNibble(std::uint64_t index, unsigned code) {
        std::uint8_t& byte = bytes()[index / 2];
        byte = index % 2 == 0 ? std::uint8_t((byte & 0xf0) | code)
                              : std::uint8_t((byte & 0x0f) | (code << 4));
    }
    // The index-th fp16 of the region starting at word `base`.
    void setHalf(std::uint64_t base, std::uint64_t index, std::uint16_t bits) {
        std::memcpy(bytes() + base * 4 + index * 2, &bits, 2);
    }
};

} // namespace

void partRowValues(const MatrixPart& part, std::uint32_t cols, std::uint32_t firstRow,
                   std::span<float> out) {
    const std::uint64_t count = cols ? out.size() / cols : 0;
    if (cols == 0 || out.size() % cols != 0 || firstRow + count > part.rows)
        throw ComputeError("partRowValues: rows " + std::to_string(firstRow) + " + " +
                           std::to_string(count) + " outside a part of " +
                           std::to_string(part.rows));
    if (!part.values.empty()) {
        if (part.values.size() != std::uint64_t(part.rows) * cols)
            throw ComputeError("matrix part has the wrong size");
        const auto from = part.values.subspan(std::uint64_t(firstRow) * cols, out.size());
        std::copy(from.begin(), from.end(), out.begin());
        return;
    }
    if (!part.stored) throw ComputeError("matrix part has neither values nor stored bytes");
    // A row of a stored matrix is a whole number of the type's blocks.
    const auto rowBytes = models::tensorBytes(part.stored->type, cols);
    if (!rowBytes || count * *rowBytes > part.stored->data.size() - firstRow * *rowBytes)
        throw ComputeError("tensor '" + part.stored->name + "' of type " +
                           std::string(models::tensorTypeName(part.stored->type)) +
                           " has no whole rows of " + std::to_string(cols) + " values");
    models::dequantize(part.stored->type,
                       part.stored->data.subspan(firstRow * *rowBytes, count * *rowBytes), out);
}

namespace {

// A part's f32 values: given (no copy), or its stored bytes dequantized into `scratch`.
std::span<const float> partValues(const MatrixPart& part, std::uint32_t cols,
                                  std::vector<float>& scratch) {
    const std::uint64_t n = std::uint64_t(part.rows) * cols;
    if (!part.values.empty()) {
        if (part.values.size() != n) throw ComputeError("matrix part has the wrong size");
        return part.values;
    }
    scratch.resize(n);
    partRowValues(part, cols, 0, scratch);
    return scratch;
}

void packLab(const models::QuantSchemeSpec& spec, WeightFormat format,
             std::span<const MatrixPart> parts, GpuPackedMatrix& out, std::uint64_t slabValues) {
    using models::QuantScheme;
    const bool eightBit =
        spec.scheme == QuantScheme::Int8PerTensor || spec.scheme == QuantScheme::Int8PerRow;
    const bool grouped =
        spec.scheme == QuantScheme::Int4PerGroup || spec.scheme == QuantScheme::Nf4;
    const bool perTensor =
        spec.scheme == QuantScheme::Int8PerTensor || spec.scheme == QuantScheme::Int4PerTensor;
    const std::uint64_t cols = out.cols, stride = out.stride;
    if (grouped && cols % 4 != 0) {
        throw ComputeError(std::string(weightFormatName(format)) +
                           " needs a multiple of 4 columns (a vec4 must share one group), got " +
                           std::to_string(cols));
    }
    const auto size = packedMatrixSize(format, out.rows, out.cols);
    out.formatWords = std::uint32_t(size.formatWords);
    out.words.assign(size.words, 0u);
    WordWriter writer{out.words};
    const unsigned zeroCode = eightBit ? 0u : (spec.scheme == QuantScheme::Nf4 ? 7u : 8u);
    if (!eightBit) {
        const std::uint32_t fill = zeroCode * 0x11111111u;
        std::fill_n(out.words.begin(), out.formatWords, fill);
    }

    // A part is packed a slab of rows at a time (dequantized per slab when it comes from the
    // file), so a large matrix (a tied head) is never whole in f32 on the host. Slabs start on
    // whole groups and whole bytes of codes, so they pack exactly as the whole part would; a
    // per-tensor scale needs the whole part.
    const std::uint64_t granule = std::lcm<std::uint64_t>(
        grouped ? spec.groupSize / std::gcd<std::uint64_t>(spec.groupSize, cols) : 1,
        cols % 2 == 0 ? 1 : 2);
    const std::uint64_t slabTarget = std::max<std::uint64_t>(1, slabValues / cols);
    std::uint32_t firstRow = 0;
    std::uint64_t firstScale = 0;
    std::vector<float> slab;
    for (std::size_t index = 0; index < parts.size(); ++index) {
        const auto& part = parts[index];
        const std::uint64_t n = std::uint64_t(part.rows) * cols;
        if (grouped && index + 1 < parts.size() && n % spec.groupSize != 0) {
            throw ComputeError(std::string(weightFormatName(format)) + ": a fused part of " +
                               std::to_string(n) + " weights is not a whole number of groups");
        }
        const std::uint64_t slabRows =
            perTensor ? part.rows : (slabTarget + granule - 1) / granule * granule;
        for (std::uint64_t slabFirst = 0; slabFirst < part.rows; slabFirst += slabRows) {
            const auto rows =
                std::uint32_t(std::min<std::uint64_t>(slabRows, part.rows - slabFirst));
            const std::uint64_t slabN = std::uint64_t(rows) * cols;
            slab.resize(slabN);
            partRowValues(part, std::uint32_t(cols), std::uint32_t(slabFirst), slab);
            const auto packed = models::packMatrix(spec, slab, rows, cols);
            const std::uint8_t* codes = packed.bytes.data();
            const std::uint8_t* scales = codes + (eightBit ? slabN : (slabN + 1) / 2);
            for (std::uint64_t r = 0; r < rows; ++r) {
                const std::uint64_t target = (firstRow + slabFirst + r) * stride;
                const std::uint64_t source = r * cols;
                if (eightBit) {
                    std::memcpy(writer.bytes() + target, codes + source, cols);
                    continue;
                }
                for (std::uint64_t c = 0; c < cols; ++c) {
                    const std::uint64_t e = source + c;
                    const unsigned code = e % 2 == 0 ? codes[e / 2] & 0x0fu : codes[e / 2] >> 4;
                    writer.setNibble(target + c, code);
                }
            }
            if (grouped) {
                const std::uint64_t count = (slabN + spec.groupSize - 1) / spec.groupSize;
                for (std::uint64_t s = 0; s < count; ++s)
                    writer.setHalf(out.formatWords, firstScale + s, readU16(scales + 2 * s));
                firstScale += count;
            } else {
                for (std::uint64_t r = 0; r < rows; ++r)
                    writer.setHalf(out.formatWords, firstRow + slabFirst + r,
                                   readU16(scales + 2 * (perTensor ? 0 : r)));
            }
        }
        firstRow += part.rows;
    }
}

void packGgml(models::TensorType type, std::span<const MatrixPart> parts, GpuPackedMatrix& out) {
    if (planeLayout(type)) {
        packPlanes(type, parts, out);
        return;
    }
    const std::uint64_t cols = out.cols, stride = out.stride;
    const bool eightBit = type == models::TensorType::Q8_0;
    const auto size = packedMatrixSize(out.format, out.rows, out.cols);
    out.formatWords = std::uint32_t(size.formatWords);
    out.words.assign(size.words, 0u);
    WordWriter writer{out.words};
    const auto traits = models::tensorTypeTraits(type);
    std::uint32_t firstRow = 0;
    std::vector<float> scratch;
    for (const auto& part : parts) {
        std::vector<std::uint8_t> quantized;
        std::span<const std::uint8_t> bytes;
        if (part.stored && part.stored->type == type) {
            bytes = part.stored->data;
        } else if (eightBit) {
            // Q8_0 from f32: the shared block quantizer, its f32 scale kept as is.
            const auto values = partValues(part, std::uint32_t(cols), scratch);
            std::int8_t codes[models::kQ8_0Block];
            for (std::uint64_t r = 0; r < part.rows; ++r) {
                for (std::uint64_t b = 0; b * kGgmlBlock < cols; ++b) {
                    const std::uint64_t count = std::min<std::uint64_t>(kGgmlBlock, cols - b * 32);
                    const float scale = models::quantizeQ8_0Block(
                        values.subspan(r * cols + b * kGgmlBlock, count), std::span(codes, count));
                    const std::uint64_t target = (firstRow + r) * stride + b * kGgmlBlock;
                    out.words[out.formatWords + target / kGgmlBlock] =
                        std::bit_cast<std::uint32_t>(scale);
                    std::memcpy(writer.bytes() + target, codes, count);
                }
            }
            firstRow += part.rows;
            continue;
        } else {
            if (cols % kGgmlBlock != 0) {
                throw ComputeError(std::string(traits.name) +
                                   " needs a multiple of 32 columns, got " + std::to_string(cols));
            }
            quantized = models::quantizeGgml(type, partValues(part, std::uint32_t(cols), scratch));
            bytes = quantized;
        }
        if (cols % kGgmlBlock != 0)
            throw ComputeError(std::string(traits.name) + " needs a multiple of 32 columns");
        const std::uint64_t blocksPerRow = cols / kGgmlBlock;
        if (bytes.size() != std::uint64_t(part.rows) * blocksPerRow * traits.blockBytes)
            throw ComputeError("stored " + std::string(traits.name) + " bytes have the wrong size");
        for (std::uint64_t r = 0; r < part.rows; ++r) {
            for (std::uint64_t b = 0; b < blocksPerRow; ++b) {
                const std::uint8_t* block =
                    bytes.data() + (r * blocksPerRow + b) * traits.blockBytes;
                const std::uint64_t target = (firstRow + r) * stride + b * kGgmlBlock;
                const std::uint64_t gpuBlock = target / kGgmlBlock;
                switch (type) {
                case models::TensorType::Q8_0:
                    out.words[out.formatWords + gpuBlock] =
                        std::bit_cast<std::uint32_t>(models::halfToFloat(readU16(block)));
                    std::memcpy(writer.bytes() + target, block + 2, kGgmlBlock);
                    break;
                case models::TensorType::Q4_0:
                case models::TensorType::Q4_1: {
                    const bool hasMin = type == models::TensorType::Q4_1;
                    if (hasMin) {
                        out.words[out.formatWords + gpuBlock] =
                            std::uint32_t(readU16(block)) |
                            (std::uint32_t(readU16(block + 2)) << 16);
                    } else {
                        writer.setHalf(out.formatWords, gpuBlock, readU16(block));
                    }
                    // GGUF: element i in the low nibble of byte i, element i + 16 in the high.
                    const std::uint8_t* qs = block + (hasMin ? 4 : 2);
                    for (std::uint64_t i = 0; i < 16; ++i) {
                        writer.setNibble(target + i, qs[i] & 0x0fu);
                        writer.setNibble(target + i + 16, qs[i] >> 4);
                    }
                    break;
                }
                default:
                    break;
                }
            }
        }
        firstRow += part.rows;
    }
}

} // namespace

std::uint64_t plainRowWords(WeightFormat format, std::uint32_t cols) {
    const std::uint64_t stride = paddedColumns(cols);
    return weightFormatInfo(format).packer == WeightPacker::Float32 ? stride : stride / 2;
}

std::vector<std::uint32_t> packPlainRows(WeightFormat format, std::span<const float> values,
                                         std::uint32_t cols) {
    const auto packer = weightFormatInfo(format).packer;
    if (packer != WeightPacker::Float32 && packer != WeightPacker::Float16)
        throw ComputeError("packPlainRows: " + std::string(weightFormatName(format)) +
                           " is not a plain float format");
    const bool bfloat = format == WeightFormat::BF16;
    const std::uint64_t rows = cols ? values.size() / cols : 0;
    const std::uint64_t rowWords = plainRowWords(format, cols);
    std::vector<std::uint32_t> words(rows * rowWords, 0u);
    WordWriter writer{words};
    for (std::uint64_t r = 0; r < rows; ++r) {
        const float* source = values.data() + r * cols;
        if (packer == WeightPacker::Float32) {
            std::memcpy(words.data() + r * rowWords, source, std::size_t(cols) * 4);
        } else {
            for (std::uint64_t c = 0; c < cols; ++c)
                writer.setHalf(r * rowWords, c,
                               bfloat ? models::floatToBf16(source[c])
                                      : models::floatToHalf(source[c]));
        }
    }
    return words;
}

bool isLabScheme(WeightFormat format) {
    return weightFormatInfo(format).packer == WeightPacker::LabScheme;
}

bool formatReadsStoredType(WeightFormat format, models::TensorType type) {
    return weightFormatInfo(format).storedType == type;
}

WeightFormat formatForStoredType(models::TensorType type) {
    for (const auto& info : weightFormatTable())
        if (info.storedType == type) return info.format;
    throw ComputeError("no GPU weight format reads " + std::string(models::tensorTypeName(type)));
}

GpuPackedMatrix packForGpu(WeightFormat format, std::span<const MatrixPart> parts,
                           std::uint32_t cols, std::uint64_t slabValues) {
    const auto& info = weightFormatInfo(format);
    GpuPackedMatrix out;
    out.format = format;
    out.cols = cols;
    out.stride = paddedColumns(cols);
    for (const auto& part : parts) out.rows += part.rows;
    if (out.rows == 0 || cols == 0) throw ComputeError("packForGpu: empty matrix");
    switch (info.packer) {
    case WeightPacker::Float32:
    case WeightPacker::Float16: {
        std::vector<float> scratch;
        for (const auto& part : parts) {
            const auto words = packPlainRows(format, partValues(part, cols, scratch), cols);
            out.words.insert(out.words.end(), words.begin(), words.end());
        }
        break;
    }
    case WeightPacker::LabScheme:
        packLab(*info.labScheme, format, parts, out, slabValues);
        out.alignedGroups = info.alignedVariant && cols % kColumnPadding == 0;
        break;
    case WeightPacker::GgmlBlocks:
        packGgml(*info.storedType, parts, out);
        break;
    case WeightPacker::PerMatrix:
        throw ComputeError("packForGpu: as-stored is not a GPU layout (the engine resolves it "
                           "per matrix to the format of the stored type)");
    }
    return out;
}

namespace {

// Where a layout keeps its scales, for stackPackedRows (Planes: compute/formats/GgmlPlanes.hpp).
enum class ScaleLayout { None, HalfPerRow, HalfPerGroup, HalfPerBlock, WordPerBlock, Planes };
struct PackedLayout {
    std::uint32_t codeBits = 32;
    ScaleLayout scales = ScaleLayout::None;
    std::uint32_t group = 0; // elements per scale (groups and blocks)
};

PackedLayout packedLayout(WeightFormat format) {
    const auto& info = weightFormatInfo(format);
    switch (info.packer) {
    case WeightPacker::Float32:
        return {32, ScaleLayout::None, 0};
    case WeightPacker::Float16:
        return {16, ScaleLayout::None, 0};
    case WeightPacker::LabScheme: {
        using models::QuantScheme;
        const auto scheme = info.labScheme->scheme;
        const bool eightBit =
            scheme == QuantScheme::Int8PerTensor || scheme == QuantScheme::Int8PerRow;
        const bool grouped = scheme == QuantScheme::Int4PerGroup || scheme == QuantScheme::Nf4;
        return {eightBit ? 8u : 4u, grouped ? ScaleLayout::HalfPerGroup : ScaleLayout::HalfPerRow,
                grouped ? info.labScheme->groupSize : 0u};
    }
    case WeightPacker::GgmlBlocks:
        if (const auto planes = planeLayout(*info.storedType))
            return {planes->codeBits, ScaleLayout::Planes, planes->group};
        switch (*info.storedType) {
        case models::TensorType::Q8_0:
            return {8, ScaleLayout::WordPerBlock, kGgmlBlock};
        case models::TensorType::Q4_0:
            return {4, ScaleLayout::HalfPerBlock, kGgmlBlock};
        default:
            return {4, ScaleLayout::WordPerBlock, kGgmlBlock};
        }
    case WeightPacker::PerMatrix:
        break;
    }
    throw ComputeError("as-stored is not a GPU layout");
}

std::uint16_t halfAt(const GpuPackedMatrix& matrix, std::uint64_t index) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(matrix.words.data());
    return readU16(bytes + std::uint64_t(matrix.formatWords) * 4 + index * 2);
}

} // namespace

namespace {
// The kernels read packed words four at a time, as 16-byte texels (shaders/quant_codes.glsl),
// so every layout ends on a whole texel.
constexpr std::uint64_t kTexelWords = 4;
std::uint64_t wholeTexelWords(std::uint64_t words) {
    return (words + kTexelWords - 1) / kTexelWords * kTexelWords;
}
} // namespace

PackedMatrixSize packedMatrixSize(WeightFormat format, std::uint32_t rows, std::uint32_t cols) {
    const auto layout = packedLayout(format);
    const std::uint64_t stride = paddedColumns(cols);
    const std::uint64_t codeWords = std::uint64_t(rows) * stride * layout.codeBits / 32;
    const std::uint64_t blocks = layout.group ? std::uint64_t(rows) * stride / layout.group : 0;
    std::uint64_t scaleWords = 0;
    switch (layout.scales) {
    case ScaleLayout::None:
        return {0, codeWords};
    case ScaleLayout::Planes: {
        const auto sizes =
            planeSizes(*planeLayout(*weightFormatInfo(format).storedType), rows, stride);
        return {sizes.codeWords, sizes.total()};
    }
    case ScaleLayout::HalfPerRow:
        scaleWords = (std::uint64_t(rows) + 1) / 2;
        break;
    case ScaleLayout::HalfPerGroup: {
        // Padding columns compute a logical index up to one row past the end, so a few zero
        // scales follow the real ones.
        const std::uint64_t halves = (std::uint64_t(rows) * cols + stride) / layout.group + 2;
        scaleWords = (halves + 1) / 2;
        break;
    }
    case ScaleLayout::HalfPerBlock:
        scaleWords = (blocks + 1) / 2;
        break;
    case ScaleLayout::WordPerBlock:
        scaleWords = blocks;
        break;
    }
    return {codeWords, wholeTexelWords(codeWords + scaleWords)};
}

std::vector<RowRange> planMatrixChunks(WeightFormat format, std::uint32_t rows, std::uint32_t cols,
                                       std::uint64_t limitBytes, std::uint32_t rowGranule,
                                       bool gateUpPairs, const std::string& what) {
    // Output rows: a gate|up chunk of n outputs holds 2n stored rows.
    const std::uint32_t outputRows = gateUpPairs ? rows / 2 : rows;
    const std::uint32_t rowsPerOutput = gateUpPairs ? 2 : 1;
    const auto packer = weightFormatInfo(format).packer;
    if (packer == WeightPacker::Float32 || packer == WeightPacker::Float16) {
        const std::uint64_t outputBytes = plainRowWords(format, cols) * 4 * rowsPerOutput;
        return planRowChunks(
            outputRows,
            std::uint32_t(std::min<std::uint64_t>(limitBytes / outputBytes, outputRows)),
            rowGranule, what);
    }
    const std::uint64_t packedBytes = packedMatrixSize(format, rows, cols).bytes();
    if (packedBytes <= limitBytes) return {RowRange{0, outputRows}};
    // Scales are spread evenly over the rows, but for a few padding words per chunk.
    const std::uint64_t outputBytes = (packedBytes + rows - 1) / rows * rowsPerOutput;
    const std::uint64_t slack = 2ull * paddedColumns(cols) + 64;
    const std::uint32_t maxRows =
        limitBytes > slack ? std::uint32_t((limitBytes - slack) / outputBytes) : 0;
    const std::uint32_t groupRows = packedRowGranule(format, cols);
    const std::uint32_t granule = std::lcm(std::max(rowGranule, 1u), groupRows);
    return planRowChunks(outputRows, maxRows, granule, what);
}

std::uint64_t chunkedMatrixBytes(WeightFormat format, std::uint32_t cols,
                                 std::span<const RowRange> chunks, bool gateUpPairs) {
    std::uint64_t bytes = 0;
    for (const auto& chunk : chunks)
        bytes += packedMatrixSize(format, chunk.count * (gateUpPairs ? 2u : 1u), cols).bytes();
    return bytes;
}

WeightFormat resolveWeightFormat(const models::WeightStore* store,
                                 const std::vector<std::string>& names, WeightFormat format) {
    if (format != WeightFormat::AsStored) return format;
    if (!store) return WeightFormat::F32;
    // A fused matrix takes its parts' common type; parts stored differently (mixed
    // K-quant files), and types no kernel reads, fall back to f16.
    std::optional<models::TensorType> type;
    for (const auto& name : names) {
        const auto* tensor = store->find(name);
        if (!tensor || (type && *type != tensor->type)) return WeightFormat::F16;
        type = tensor->type;
    }
    return type ? formatForStoredType(*type) : WeightFormat::F16;
}

std::vector<MatrixSection> planMatrixSections(const models::WeightStore* store,
                                              const std::vector<std::string>& names,
                                              std::span<const std::uint32_t> partRows,
                                              WeightFormat format, std::uint32_t cols,
                                              std::uint64_t limitBytes, std::uint32_t rowGranule,
                                              bool gateUpPairs, const std::string& what) {
    if (partRows.size() != names.size())
        throw ComputeError("planMatrixSections: " + std::to_string(names.size()) + " parts, " +
                           std::to_string(partRows.size()) + " row counts");
    std::vector<MatrixSection> sections;
    auto whole = [&](WeightFormat chosen) {
        MatrixSection section;
        section.format = chosen;
        for (std::size_t i = 0; i < names.size(); ++i) {
            section.parts.push_back(i);
            section.rows += partRows[i];
        }
        section.chunks =
            planMatrixChunks(chosen, section.rows, cols, limitBytes, rowGranule, gateUpPairs, what);
        return std::vector<MatrixSection>{section};
    };
    const auto common = resolveWeightFormat(store, names, format);
    if (format != WeightFormat::AsStored || !store || names.size() < 2 ||
        std::any_of(names.begin(), names.end(), [&](const auto& n) { return !store->find(n); }))
        return whole(common);
    const std::uint32_t granule = std::max(rowGranule, 1u);
    for (std::size_t i = 0; i < names.size(); ++i) {
        const auto partFormat = formatForStoredType(store->find(names[i])->type);
        if (!sections.empty() && sections.back().format == partFormat) {
            sections.back().parts.push_back(i);
            sections.back().rows += partRows[i];
            continue;
        }
        if (partRows[i] % granule != 0) return whole(WeightFormat::F16);
        MatrixSection section;
        section.format = partFormat;
        section.parts.push_back(i);
        section.rows = partRows[i];
        section.firstRow = sections.empty() ? 0 : sections.back().firstRow + sections.back().rows;
        sections.push_back(section);
    }
    if (sections.size() == 1) return whole(common);
    if (gateUpPairs) return whole(WeightFormat::F16);
    for (auto& section : sections)
        section.chunks = planMatrixChunks(section.format, section.rows, cols, limitBytes,
                                          rowGranule, false, what);
    return sections;
}

std::uint32_t packedRowGranule(WeightFormat format, std::uint32_t cols) {
    const auto layout = packedLayout(format);
    if ((layout.scales != ScaleLayout::HalfPerGroup && layout.scales != ScaleLayout::Planes) ||
        cols == 0)
        return 1;
    return layout.group / std::gcd(cols, layout.group);
}

GpuPackedMatrix stackPackedRows(const GpuPackedMatrix& source, std::span<const RowRange> ranges) {
    const auto layout = packedLayout(source.format);
    if (layout.scales == ScaleLayout::Planes)
        return stackPlaneRows(source, *planeLayout(*weightFormatInfo(source.format).storedType),
                              ranges);
    GpuPackedMatrix out;
    out.format = source.format;
    out.cols = source.cols;
    out.stride = source.stride;
    out.alignedGroups = source.alignedGroups;
    const std::uint64_t codeWordsPerRow = std::uint64_t(source.stride) * layout.codeBits / 32;
    for (const auto& range : ranges) {
        if (range.count == 0 || std::uint64_t(range.first) + range.count > source.rows)
            throw ComputeError("stackPackedRows: rows " + std::to_string(range.first) + " + " +
                               std::to_string(range.count) + " outside a matrix of " +
                               std::to_string(source.rows));
        out.rows += range.count;
        const auto begin = source.words.begin() + std::ptrdiff_t(range.first * codeWordsPerRow);
        out.words.insert(out.words.end(), begin,
                         begin + std::ptrdiff_t(range.count * codeWordsPerRow));
    }
    if (layout.scales == ScaleLayout::None) return out;
    out.formatWords = std::uint32_t(out.words.size());
    const std::uint64_t blocksPerRow = layout.group ? source.stride / layout.group : 0;
    if (layout.scales == ScaleLayout::WordPerBlock) {
        for (const auto& range : ranges) {
            const auto begin = source.words.begin() + source.formatWords +
                               std::ptrdiff_t(range.first * blocksPerRow);
            out.words.insert(out.words.end(), begin,
                             begin + std::ptrdiff_t(range.count * blocksPerRow));
        }
        out.words.resize(wholeTexelWords(out.words.size()), 0u);
        return out;
    }
    std::vector<std::uint16_t> halves;
    const std::uint64_t cols = source.cols, group = layout.group;
    for (std::size_t k = 0; k < ranges.size(); ++k) {
        const auto& range = ranges[k];
        std::uint64_t begin = 0, end = 0;
        switch (layout.scales) {
        case ScaleLayout::HalfPerRow:
            begin = range.first;
            end = begin + range.count;
            break;
        case ScaleLayout::HalfPerBlock:
            begin = range.first * blocksPerRow;
            end = begin + range.count * blocksPerRow;
            break;
        default: { // HalfPerGroup: groups of consecutive logical elements
            const std::uint64_t first = range.first * cols, last = first + range.count * cols;
            const bool isLast = k + 1 == ranges.size();
            if (first % group != 0 || (!isLast && last % group != 0))
                throw ComputeError("stackPackedRows: rows " + std::to_string(range.first) + " + " +
                                   std::to_string(range.count) + " split a scale group of " +
                                   std::to_string(group));
            begin = first / group;
            end = (last + group - 1) / group;
            break;
        }
        }
        for (std::uint64_t i = begin; i < end; ++i) halves.push_back(halfAt(source, i));
    }
    if (layout.scales == ScaleLayout::HalfPerGroup) {
        // As packLab: zero scales past the end, for the padding columns' group index.
        const std::uint64_t logical = std::uint64_t(out.rows) * cols;
        halves.resize((logical + out.stride) / group + 2, 0);
    }
    const std::size_t scaleWords = (halves.size() + 1) / 2;
    out.words.resize(wholeTexelWords(out.formatWords + scaleWords), 0u);
    std::memcpy(out.words.data() + out.formatWords, halves.data(), halves.size() * 2);
    return out;
}

DeviceMatrix uploadPacked(const VulkanContext& context, const GpuPackedMatrix& packed,
                          const std::string& label, std::optional<std::uint32_t> rowBlock,
                          const LaneScaleOrder* laneOrder) {
    // The lane-scale copy goes after the layout, which ends on a whole texel.
    std::vector<std::uint32_t> laneScales;
    if (laneOrder && laneOrder->order != SlotRowOrder::None &&
        takesLaneScales(packed.format, packed.alignedGroups))
        laneScales = packLaneScales(packed, *laneOrder);
    DeviceMatrix matrix;
    if (!laneScales.empty()) {
        matrix.laneScaleWords = std::uint32_t(packed.words.size());
        matrix.laneScaleOrder = *laneOrder;
    }
    matrix.format = packed.format;
    matrix.rows = packed.rows;
    matrix.cols = packed.cols;
    matrix.stride = packed.stride;
    matrix.alignedGroups = packed.alignedGroups;
    matrix.formatWords = packed.formatWords;
    matrix.rowBlock = rowBlock.value_or(codeRowBlockFor(context.info(), packed.rows));
    const std::span<const std::uint32_t> words(packed.words);
    // The buffer has the packed size in either order.
    matrix.buffer =
        Buffer(context, words.size_bytes() + laneScales.size() * 4, BufferKind::DeviceLocal, label);
    if (!laneScales.empty())
        matrix.buffer.upload(std::span<const std::uint32_t>(laneScales), words.size_bytes());
    if (matrix.rowBlock == 0) {
        matrix.buffer.upload(words);
        return matrix;
    }
    // Codes reordered a slice of whole row blocks at a time, then the scales as they are.
    const std::uint64_t rowWords =
        std::uint64_t(packed.stride) * codeBitsPerWeight(packed.format) / 32;
    const std::uint64_t codeWords = std::uint64_t(packed.rows) * rowWords;
    if (packed.formatWords ? packed.formatWords != codeWords : words.size() != codeWords)
        throw ComputeError("uploadPacked: '" + label + "' does not hold " +
                           std::to_string(packed.rows) + " rows of codes");
    const std::uint64_t sliceRows = codeRowsPerUploadSlice(rowWords * 4, matrix.rowBlock);
    for (std::uint64_t first = 0; first < packed.rows; first += sliceRows) {
        const std::uint64_t count = std::min<std::uint64_t>(sliceRows, packed.rows - first);
        const auto slice = interleaveCodeRows(words.subspan(first * rowWords, count * rowWords),
                                              count, rowWords, matrix.rowBlock);
        matrix.buffer.upload(std::span<const std::uint32_t>(slice), first * rowWords * 4);
    }
    if (words.size() > codeWords) matrix.buffer.upload(words.subspan(codeWords), codeWords * 4);
    return matrix;
}

std::uint32_t codeBitsPerWeight(WeightFormat format) {
    return packedLayout(format).codeBits;
}

std::vector<float> referenceDequantized(WeightFormat format, std::span<const float> values,
                                        std::uint32_t rows, std::uint32_t cols,
                                        const models::StoredTensor* stored) {
    const auto& info = weightFormatInfo(format);
    std::vector<float> scratch;
    const MatrixPart part{values, rows, stored};
    if (info.packer == WeightPacker::LabScheme) {
        return models::dequantizeMatrix(
            models::packMatrix(*info.labScheme, partValues(part, cols, scratch), rows, cols));
    }
    const auto type = info.storedType;
    if (stored && type && stored->type == *type && info.packer == WeightPacker::GgmlBlocks) {
        std::vector<float> out(std::uint64_t(rows) * cols);
        models::dequantize(*type, stored->data, out);
        return out;
    }
    const auto source = partValues(part, cols, scratch);
    std::vector<float> out(source.begin(), source.end());
    switch (info.packer) {
    case WeightPacker::Float16:
        for (auto& v : out)
            v = format == WeightFormat::BF16 ? models::bf16ToFloat(models::floatToBf16(v))
                                             : models::halfToFloat(models::floatToHalf(v));
        break;
    case WeightPacker::GgmlBlocks:
        if (*type == models::TensorType::Q8_0) {
            // Blocks of 32 along each row, the last one shorter (as packGgml packs them).
            std::int8_t codes[models::kQ8_0Block];
            for (std::uint64_t r = 0; cols && r < out.size() / cols; ++r) {
                for (std::uint32_t b = 0; b < cols; b += kGgmlBlock) {
                    const auto block =
                        std::span(out).subspan(r * cols + b, std::min(kGgmlBlock, cols - b));
                    const float scale =
                        models::quantizeQ8_0Block(block, std::span(codes, block.size()));
                    for (std::size_t i = 0; i < block.size(); ++i) block[i] = codes[i] * scale;
                }
            }
        } else {
            models::dequantize(*type, models::quantizeGgml(*type, source), out);
        }
        break;
    case WeightPacker::PerMatrix:
        throw ComputeError("referenceDequantized: as-stored is resolved per matrix");
    default:
        break; // f32: as is
    }
    return out;
}

} // namespace inferscope::compute
