#include "compute/formats/GgmlPlanes.hpp"

#include "models/formats/TensorType.hpp"
#include "models/quant/GgmlQuantize.hpp"

#include <cstring>
#include <string>

namespace inferscope::compute {

namespace {

using models::TensorType;

constexpr std::uint64_t kChunk = 32; // elements per block of the code and high regions
constexpr std::uint64_t kTexelWords = 4;

std::uint16_t readU16(const std::uint8_t* p) {
    return std::uint16_t(p[0] | (p[1] << 8));
}
std::uint32_t readU32(const std::uint8_t* p) {
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
           (std::uint32_t(p[3]) << 24);
}

// Q4_K / Q5_K's scale and min j from the 12 packed bytes (TensorType.cpp's scaleAndMin).
void scaleAndMin(const std::uint8_t* packed, int j, std::uint8_t& scale, std::uint8_t& min) {
    if (j < 4) {
        scale = packed[j] & 63;
        min = packed[j + 4] & 63;
    } else {
        scale = std::uint8_t((packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4));
        min = std::uint8_t((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}

// Q3_K's scale j as stored (6 bits, the value plus 32).
std::uint8_t q3kStoredScale(const std::uint8_t* packed, int j) {
    const int low = j < 8 ? packed[j] & 0x0F : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    return std::uint8_t(low | (high << 4));
}

// The whole code (low and high bits) of element i of a stored block.
std::uint32_t storedCode(TensorType type, const std::uint8_t* block, std::uint32_t i) {
    switch (type) {
    case TensorType::Q5_0:
    case TensorType::Q5_1: {
        const std::uint8_t* qs = block + (type == TensorType::Q5_0 ? 6 : 8);
        const std::uint32_t qh = readU32(block + (type == TensorType::Q5_0 ? 2 : 4));
        const std::uint32_t low = i < 16 ? qs[i] & 15u : qs[i - 16] >> 4;
        return low | (((qh >> i) & 1u) << 4);
    }
    case TensorType::IQ4_NL:
        return i < 16 ? block[2 + i] & 15u : block[2 + i - 16] >> 4;
    case TensorType::IQ4_XS: {
        const std::uint8_t* qs = block + 8 + 16 * (i / 32);
        const std::uint32_t p = i % 32;
        return p < 16 ? qs[p] & 15u : qs[p - 16] >> 4;
    }
    case TensorType::Q4_K:
    case TensorType::Q5_K: {
        // Sub-blocks 2c and 2c + 1 share 32 bytes: low and high nibbles.
        const std::uint32_t s = i / 32, l = i % 32;
        const std::uint8_t* qs = block + (type == TensorType::Q4_K ? 16 : 48);
        const std::uint32_t low = (qs[32 * (s / 2) + l] >> (4 * (s % 2))) & 15u;
        if (type == TensorType::Q4_K) return low;
        return low | (((block[16 + l] >> s) & 1u) << 4);
    }
    case TensorType::Q6_K: {
        const std::uint32_t half = i / 128, group = (i % 128) / 32, l = i % 32;
        const std::uint8_t lowByte = block[64 * half + l + ((group & 1) ? 32 : 0)];
        const std::uint32_t low = (lowByte >> ((group & 2) ? 4 : 0)) & 15u;
        const std::uint32_t high = (block[128 + 32 * half + l] >> (2 * group)) & 3u;
        return low | (high << 4);
    }
    case TensorType::Q2_K:
    case TensorType::Q3_K: {
        const std::uint32_t half = i / 128, group = (i % 128) / 32, l = i % 32;
        const std::uint8_t* qs = block + (type == TensorType::Q2_K ? 16 : 32);
        const std::uint32_t low = (qs[32 * half + l] >> (2 * group)) & 3u;
        if (type == TensorType::Q2_K) return low;
        return low | (((block[l] >> (4 * half + group)) & 1u) << 2);
    }
    default:
        throw ComputeError("not a planes type: " + std::string(models::tensorTypeName(type)));
    }
}

// Byte-addressed access to the packed words (the host is little-endian, like SPIR-V).
struct Regions {
    GpuPackedMatrix& out;
    PlaneLayout layout;
    PlaneSizes sizes;
    std::uint8_t* bytes() { return reinterpret_cast<std::uint8_t*>(out.words.data()); }
    std::uint64_t highBase() const { return out.formatWords; }
    std::uint64_t recordBase() const { return out.formatWords + sizes.highWords; }
    std::uint64_t halfBase() const { return recordBase() + sizes.recordWords; }

    // Element e (row-major, padded) has code `code`: low bits to the code region in the split
    // order, high bits to the high region.
    void putCode(std::uint64_t e, std::uint32_t code) {
        const std::uint64_t chunk = e / kChunk, p = e % kChunk, lane = p / 4, b = p % 4;
        const std::uint32_t low = code & ((1u << layout.codeBits) - 1u);
        const std::uint32_t high = code >> layout.codeBits;
        if (layout.codeBits == 4) {
            std::uint8_t& byte = bytes()[chunk * 16 + 4 * (lane % 4) + b];
            byte = std::uint8_t(byte | (low << (lane < 4 ? 0 : 4)));
        } else {
            std::uint8_t& byte = bytes()[chunk * 8 + 4 * (lane / 4) + b];
            byte = std::uint8_t(byte | (low << (2 * (lane % 4))));
        }
        if (layout.highBits == 1) {
            out.words[highBase() + chunk] |= high << (8 * b + lane);
        } else if (layout.highBits == 2) {
            out.words[highBase() + 2 * chunk + lane / 4] |= high << (8 * b + 2 * (lane % 4));
        }
    }
    void putRecordWord(std::uint64_t group, std::uint32_t word, std::uint32_t value) {
        out.words[recordBase() + group * layout.recordWords + word] = value;
    }
    void putHalf(std::uint64_t group, std::uint16_t value) {
        std::memcpy(bytes() + halfBase() * 4 + group * 2, &value, 2);
    }
};

// One stored block at the row-major padded element e0 (a multiple of the block).
void transcodeBlock(TensorType type, const std::uint8_t* block, std::uint64_t e0,
                    Regions& regions) {
    const auto& layout = regions.layout;
    for (std::uint32_t i = 0; i < layout.group; ++i)
        regions.putCode(e0 + i, storedCode(type, block, i));
    const std::uint64_t group = e0 / layout.group;
    switch (type) {
    case TensorType::Q5_0:
    case TensorType::IQ4_NL:
        regions.putHalf(group, readU16(block));
        break;
    case TensorType::Q5_1:
        regions.putRecordWord(group, 0, readU32(block));
        break;
    case TensorType::Q4_K:
    case TensorType::Q5_K: // d, dmin, 12 bytes of scales and mins
        for (std::uint32_t w = 0; w < 4; ++w)
            regions.putRecordWord(group, w, readU32(block + 4 * w));
        break;
    case TensorType::Q6_K:
        for (std::uint32_t w = 0; w < 4; ++w)
            regions.putRecordWord(group, w, readU32(block + 192 + 4 * w));
        regions.putHalf(group, readU16(block + 208));
        break;
    case TensorType::Q3_K:
        for (std::uint32_t w = 0; w < 3; ++w)
            regions.putRecordWord(group, w, readU32(block + 96 + 4 * w));
        regions.putHalf(group, readU16(block + 108));
        break;
    case TensorType::Q2_K:
        for (std::uint32_t w = 0; w < 4; ++w)
            regions.putRecordWord(group, w, readU32(block + 4 * w));
        regions.putRecordWord(group, 4, readU32(block + 80));
        break;
    case TensorType::IQ4_XS:
        regions.putRecordWord(group, 0, readU32(block));
        regions.putRecordWord(group, 1, readU32(block + 4));
        break;
    default:
        break;
    }
}

} // namespace

std::optional<PlaneLayout> planeLayout(models::TensorType type) {
    switch (type) {
    case TensorType::Q5_0:
        return PlaneLayout{4, 1, 32, 0, true, 12};
    case TensorType::Q5_1:
        return PlaneLayout{4, 1, 32, 1, false, 16};
    case TensorType::IQ4_NL:
        return PlaneLayout{4, 0, 32, 0, true, 4};
    case TensorType::Q2_K:
        return PlaneLayout{2, 0, 256, 5, false, 12};
    case TensorType::Q3_K:
        return PlaneLayout{2, 1, 256, 3, true, 16};
    case TensorType::Q4_K:
        return PlaneLayout{4, 0, 256, 4, false, 12};
    case TensorType::Q5_K:
        return PlaneLayout{4, 1, 256, 4, false, 20};
    case TensorType::Q6_K:
        return PlaneLayout{4, 2, 256, 4, true, 24};
    case TensorType::IQ4_XS:
        return PlaneLayout{4, 0, 256, 2, false, 8};
    default:
        return std::nullopt;
    }
}

std::optional<models::TensorType> planeType(WeightFormat format) {
    const auto& info = weightFormatInfo(format);
    if (info.packer != WeightPacker::GgmlBlocks || !info.storedType) return std::nullopt;
    return planeLayout(*info.storedType) ? info.storedType : std::nullopt;
}

std::uint64_t PlaneSizes::total() const {
    const std::uint64_t words = codeWords + highWords + recordWords + halfWords;
    return (words + kTexelWords - 1) / kTexelWords * kTexelWords;
}

PlaneSizes planeSizes(const PlaneLayout& layout, std::uint64_t rows, std::uint64_t stride) {
    const std::uint64_t elements = rows * stride;
    const std::uint64_t groups = elements / layout.group;
    PlaneSizes sizes;
    sizes.codeWords = elements * layout.codeBits / 32;
    sizes.highWords = elements * layout.highBits / 32;
    sizes.recordWords = groups * layout.recordWords;
    sizes.halfWords = layout.halfPerGroup ? (groups + 1) / 2 : 0;
    return sizes;
}

void packPlanes(models::TensorType type, std::span<const MatrixPart> parts, GpuPackedMatrix& out) {
    const auto layout = *planeLayout(type);
    const auto traits = models::tensorTypeTraits(type);
    const std::uint64_t cols = out.cols, stride = out.stride;
    // A file's rows are whole blocks. Quantized from values, a super-block type also takes
    // rows of a multiple of 64 whose blocks run on across rows (as the int4 groups do): the
    // row-major index is then the unpadded one, so the kernels' addressing does not change.
    const bool wholeRows = cols % layout.group == 0;
    if (!wholeRows && (layout.group != 256 || cols % kColumnPadding != 0))
        throw ComputeError(
            std::string(traits.name) + " needs rows of a multiple of " +
            std::to_string(layout.group) +
            (layout.group == 256 ? " columns (64 when quantized from values)" : " columns") +
            ", got " + std::to_string(cols));
    Regions regions{out, layout, planeSizes(layout, out.rows, stride)};
    out.formatWords = std::uint32_t(regions.sizes.codeWords);
    out.words.assign(regions.sizes.total(), 0u);
    std::uint64_t firstRow = 0;
    std::vector<float> scratch;
    for (const auto& part : parts) {
        std::vector<std::uint8_t> quantized;
        std::span<const std::uint8_t> bytes;
        const std::uint64_t elements = std::uint64_t(part.rows) * cols;
        if (elements % layout.group != 0)
            throw ComputeError(std::string(traits.name) + ": a part of " +
                               std::to_string(elements) + " weights is not whole blocks of " +
                               std::to_string(layout.group));
        if (part.stored && part.stored->type == type) {
            bytes = part.stored->data;
        } else {
            std::span<const float> values = part.values;
            if (values.empty()) {
                if (!part.stored) throw ComputeError("matrix part has neither values nor bytes");
                scratch.resize(elements);
                models::dequantize(part.stored->type, part.stored->data, scratch);
                values = scratch;
            }
            quantized = models::quantizeGgml(type, values);
            bytes = quantized;
        }
        const std::uint64_t blocks = elements / layout.group;
        if (bytes.size() != blocks * traits.blockBytes)
            throw ComputeError("stored " + std::string(traits.name) + " bytes have the wrong size");
        // Rows of whole blocks: block b of row r at r * stride + (b % per row) * group; else
        // (stride == cols) blocks follow each other along the rows.
        const std::uint64_t perRow = wholeRows ? cols / layout.group : 0;
        for (std::uint64_t b = 0; b < blocks; ++b) {
            const std::uint64_t e0 =
                wholeRows ? (firstRow + b / perRow) * stride + (b % perRow) * layout.group
                          : firstRow * stride + b * layout.group;
            transcodeBlock(type, bytes.data() + b * traits.blockBytes, e0, regions);
        }
        firstRow += part.rows;
    }
}

GpuPackedMatrix stackPlaneRows(const GpuPackedMatrix& source, const PlaneLayout& layout,
                               std::span<const RowRange> ranges) {
    GpuPackedMatrix out;
    out.format = source.format;
    out.cols = source.cols;
    out.stride = source.stride;
    for (const auto& range : ranges) {
        if (range.count == 0 || std::uint64_t(range.first) + range.count > source.rows)
            throw ComputeError("stackPackedRows: rows " + std::to_string(range.first) + " + " +
                               std::to_string(range.count) + " outside a matrix of " +
                               std::to_string(source.rows));
        out.rows += range.count;
    }
    const auto from = planeSizes(layout, source.rows, source.stride);
    const auto to = planeSizes(layout, out.rows, out.stride);
    out.formatWords = std::uint32_t(to.codeWords);
    out.words.assign(to.total(), 0u);
    // Codes and high bits hold whole rows; records and halves whole groups, which a range
    // must start on (packedRowGranule; a file's rows are whole groups) and may end inside
    // only at the matrix's end.
    const std::uint64_t stride = source.stride, group = layout.group;
    const std::uint64_t codePerRow = from.codeWords / source.rows;
    const std::uint64_t highPerRow = from.highWords / source.rows;
    const std::uint64_t fromRecords = from.codeWords + from.highWords;
    const std::uint64_t toRecords = to.codeWords + to.highWords;
    const auto* fromHalves = reinterpret_cast<const std::uint16_t*>(source.words.data() +
                                                                    fromRecords + from.recordWords);
    auto* toHalves =
        reinterpret_cast<std::uint16_t*>(out.words.data() + toRecords + to.recordWords);
    std::uint64_t row = 0, toGroup = 0;
    for (const auto& range : ranges) {
        auto copy = [&](std::uint64_t fromAt, std::uint64_t toAt, std::uint64_t count) {
            const auto begin = source.words.begin() + std::ptrdiff_t(fromAt);
            std::copy(begin, begin + std::ptrdiff_t(count),
                      out.words.begin() + std::ptrdiff_t(toAt));
        };
        copy(range.first * codePerRow, row * codePerRow, range.count * codePerRow);
        copy(from.codeWords + range.first * highPerRow, to.codeWords + row * highPerRow,
             range.count * highPerRow);
        const std::uint64_t first = range.first * stride, end = first + range.count * stride;
        if (first % group != 0)
            throw ComputeError("stackPackedRows: rows " + std::to_string(range.first) + " + " +
                               std::to_string(range.count) + " split a block of " +
                               std::to_string(group));
        const std::uint64_t groups = (end + group - 1) / group - first / group;
        copy(fromRecords + first / group * layout.recordWords,
             toRecords + toGroup * layout.recordWords, groups * layout.recordWords);
        if (layout.halfPerGroup)
            for (std::uint64_t h = 0; h < groups; ++h)
                toHalves[toGroup + h] = fromHalves[first / group + h];
        row += range.count;
        toGroup += groups;
    }
    return out;
}

PlaneChunkExtras planeChunkExtras(const GpuPackedMatrix& packed, const PlaneLayout& layout,
                                  std::uint64_t row, std::uint64_t chunk) {
    const auto type = *planeType(packed.format);
    const auto sizes = planeSizes(layout, packed.rows, packed.stride);
    const std::uint64_t e = row * packed.stride + chunk * kChunk;
    const std::uint64_t block = e / kChunk, group = e / layout.group;
    PlaneChunkExtras extras;
    for (std::uint32_t h = 0; h < layout.highBits; ++h)
        extras.high[h] = packed.words.at(packed.formatWords + layout.highBits * block + h);
    const std::uint64_t recordBase = packed.formatWords + sizes.highWords;
    const std::uint32_t* record = packed.words.data() + recordBase + group * layout.recordWords;
    const auto* recordBytes = reinterpret_cast<const std::uint8_t*>(record);
    if (layout.halfPerGroup) {
        const auto* halves = reinterpret_cast<const std::uint16_t*>(packed.words.data() +
                                                                    recordBase + sizes.recordWords);
        extras.half = halves[group];
    }
    const int j = int((e % layout.group) / kChunk); // the chunk within its super-block
    switch (type) {
    case TensorType::Q5_1:
        extras.scaleWord = record[0];
        break;
    case TensorType::Q4_K:
    case TensorType::Q5_K:
        extras.scaleWord = record[0];
        scaleAndMin(recordBytes + 4, j, extras.bytes[0], extras.bytes[1]);
        break;
    case TensorType::Q6_K:
        extras.bytes[0] = recordBytes[2 * j];
        extras.bytes[1] = recordBytes[2 * j + 1];
        break;
    case TensorType::Q3_K:
        extras.bytes[0] = q3kStoredScale(recordBytes, 2 * j);
        extras.bytes[1] = q3kStoredScale(recordBytes, 2 * j + 1);
        break;
    case TensorType::Q2_K:
        extras.scaleWord = record[4];
        extras.bytes[0] = recordBytes[2 * j];
        extras.bytes[1] = recordBytes[2 * j + 1];
        break;
    case TensorType::IQ4_XS: {
        extras.half = std::uint16_t(record[0] & 0xffffu);
        const std::uint32_t scalesHigh = record[0] >> 16;
        const std::uint32_t low = (recordBytes[4 + j / 2] >> (4 * (j % 2))) & 15u;
        extras.bytes[0] = std::uint8_t(low | (((scalesHigh >> (2 * j)) & 3u) << 4));
        break;
    }
    default:
        break;
    }
    return extras;
}

void packPlaneLaneWords(
    const GpuPackedMatrix& packed, const PlaneLayout& layout, std::uint64_t rowGroups,
    const std::function<std::uint64_t(std::uint64_t, std::uint32_t, std::uint32_t)>& slotRow,
    std::vector<std::uint32_t>& out) {
    const auto type = *planeType(packed.format);
    const std::uint64_t chunks = packed.stride / kChunk;
    const bool scaleWord = type == TensorType::Q5_1 || type == TensorType::Q4_K ||
                           type == TensorType::Q5_K || type == TensorType::Q2_K;
    const bool halves = layout.halfPerGroup || type == TensorType::IQ4_XS;
    const bool bytePairs = layout.group == 256;
    for (std::uint64_t g = 0; g < rowGroups; ++g)
        for (std::uint32_t lane = 0; lane < 8; ++lane)
            for (std::uint32_t s = 0; s < 8; ++s) {
                const std::uint64_t row = slotRow(g, lane, s);
                for (std::uint64_t c = 0; c < chunks; ++c) {
                    const auto extras = planeChunkExtras(packed, layout, row, c);
                    std::uint32_t* record =
                        out.data() + ((g * chunks + c) * 8 + lane) * layout.laneWords;
                    std::uint32_t at = 0;
                    for (std::uint32_t h = 0; h < layout.highBits; ++h, at += 8)
                        record[at + s] = extras.high[h];
                    if (scaleWord) {
                        record[at + s] = extras.scaleWord;
                        at += 8;
                    }
                    if (halves) {
                        record[at + s / 2] |= std::uint32_t(extras.half) << (16 * (s % 2));
                        at += 4;
                    }
                    if (bytePairs)
                        record[at + s / 2] |=
                            (std::uint32_t(extras.bytes[0]) | (std::uint32_t(extras.bytes[1]) << 8))
                            << (16 * (s % 2));
                }
            }
}

} // namespace inferscope::compute
