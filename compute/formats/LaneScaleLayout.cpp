#include "compute/formats/LaneScaleLayout.hpp"

#include "compute/formats/GgmlPlanes.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <algorithm>
#include <string>

namespace inferscope::compute {

bool takesLaneScales(WeightFormat format, bool alignedGroups) {
    // q4_1 rows are padded to 64 columns and hold whole blocks of 32 whatever their length;
    // so do the planes types (those of 256 have rows of a multiple of 256).
    return format == WeightFormat::Q4_1 || planeType(format).has_value() ||
           (alignedGroups && (format == WeightFormat::Int4G128 || format == WeightFormat::Int4G64));
}

namespace {
// q4_1: one (d, m) word per slot and chunk of 32 columns (two texels per lane and chunk).
bool copiesScaleWords(WeightFormat format) {
    return format == WeightFormat::Q4_1;
}
} // namespace

std::uint32_t slotWeightRow(const LaneScaleOrder& order, std::uint32_t slot, std::uint32_t rows) {
    switch (order.order) {
    case SlotRowOrder::GateUpPairs: {
        const std::uint32_t outputs = rows / 2;
        const std::uint32_t i = std::min(slot / 2, outputs - 1);
        return slot % 2 == 0 ? i : i + outputs;
    }
    case SlotRowOrder::RopePairs: {
        const std::uint32_t half = order.headDim / 2;
        const std::uint32_t pair = std::min(slot / 2, rows / 2 - 1);
        const std::uint32_t base = (pair / half) * order.headDim, j = pair % half;
        if (order.splitHalf) return base + j + (slot % 2) * half;
        return base + 2 * j + slot % 2;
    }
    default:
        return std::min(slot, rows - 1);
    }
}

std::uint64_t laneScaleWords(WeightFormat format, std::uint32_t rows, std::uint32_t stride) {
    const std::uint32_t slotsPerGroup = kLaneScaleLanes * kLaneScaleSlots;
    const std::uint64_t rowGroups = (std::uint64_t(rows) + slotsPerGroup - 1) / slotsPerGroup;
    if (const auto type = planeType(format))
        return rowGroups * (stride / 32) * kLaneScaleLanes * planeLayout(*type)->laneWords;
    if (copiesScaleWords(format)) return rowGroups * (stride / 32) * kLaneScaleLanes * 8;
    return rowGroups * (stride / kLaneScaleBlock) * kLaneScaleLanes * 4;
}

std::uint64_t laneScaleCopyWords(WeightFormat format, std::uint32_t rows, std::uint32_t cols,
                                 std::uint64_t limitBytes) {
    if (!takesLaneScales(format, cols % kLaneScaleBlock == 0)) return 0;
    const std::uint64_t copy = laneScaleWords(format, rows, paddedColumns(cols));
    return (packedMatrixSize(format, rows, cols).words + copy) * 4 <= limitBytes ? copy : 0;
}

std::uint64_t laneScaleCopyBytes(WeightFormat format, std::uint32_t cols,
                                 std::span<const RowRange> chunks, bool gateUpPairs,
                                 std::uint64_t limitBytes) {
    std::uint64_t words = 0;
    for (const auto& chunk : chunks)
        words += laneScaleCopyWords(format, chunk.count * (gateUpPairs ? 2 : 1), cols, limitBytes);
    return words * 4;
}

std::vector<std::uint32_t> packLaneScales(const GpuPackedMatrix& packed,
                                          const LaneScaleOrder& order) {
    const bool scaleWords = copiesScaleWords(packed.format) || planeType(packed.format);
    if (!takesLaneScales(packed.format, packed.alignedGroups) ||
        (!scaleWords && packed.stride != packed.cols))
        throw ComputeError("packLaneScales: the matrix is not q4_1 or an int4 group format on "
                           "rows of a multiple of 64 weights");
    const bool pairs =
        order.order == SlotRowOrder::GateUpPairs || order.order == SlotRowOrder::RopePairs;
    if (order.order == SlotRowOrder::None || packed.rows == 0 || (pairs && packed.rows % 2) ||
        (order.order == SlotRowOrder::RopePairs &&
         (order.headDim < 2 || order.headDim % 2 || packed.rows % order.headDim)))
        throw ComputeError("packLaneScales: the slot order does not fit " +
                           std::to_string(packed.rows) + " rows");
    const std::uint32_t slotsPerGroup = kLaneScaleLanes * kLaneScaleSlots;
    const std::uint64_t rowGroups = (packed.rows + slotsPerGroup - 1) / slotsPerGroup;
    auto slotRow = [&](std::uint64_t g, std::uint32_t lane, std::uint32_t s) -> std::uint64_t {
        const std::uint64_t slot =
            g * slotsPerGroup + (s / 2) * 2 * kLaneScaleLanes + 2 * lane + s % 2;
        return slotWeightRow(order, std::uint32_t(std::min<std::uint64_t>(slot, ~0u)), packed.rows);
    };
    std::vector<std::uint32_t> words(laneScaleWords(packed.format, packed.rows, packed.stride), 0u);
    if (const auto type = planeType(packed.format)) {
        packPlaneLaneWords(packed, *planeLayout(*type), rowGroups, slotRow, words);
        return words;
    }
    if (scaleWords) {
        // Two texels (8 words) per row group, chunk of 32 columns and lane; word s: slot s.
        const std::uint64_t chunks = packed.stride / 32;
        for (std::uint64_t g = 0; g < rowGroups; ++g)
            for (std::uint32_t lane = 0; lane < kLaneScaleLanes; ++lane)
                for (std::uint32_t s = 0; s < kLaneScaleSlots; ++s) {
                    const std::uint64_t row = slotRow(g, lane, s);
                    for (std::uint64_t c = 0; c < chunks; ++c)
                        words[((g * chunks + c) * kLaneScaleLanes + lane) * 8 + s] =
                            packed.words.at(packed.formatWords + row * chunks + c);
                }
        return words;
    }
    const std::uint32_t group = weightFormatInfo(packed.format).labScheme->groupSize;
    auto scaleHalf = [&](std::uint64_t index) {
        const std::uint32_t word = packed.words.at(packed.formatWords + index / 2);
        return std::uint16_t(index % 2 ? word >> 16 : word & 0xffffu);
    };
    const std::uint64_t blocks = packed.stride / kLaneScaleBlock;
    // One texel (4 words, 8 halves) per row group, block and lane.
    for (std::uint64_t g = 0; g < rowGroups; ++g) {
        for (std::uint32_t lane = 0; lane < kLaneScaleLanes; ++lane) {
            for (std::uint32_t s = 0; s < kLaneScaleSlots; ++s) {
                const std::uint64_t row = slotRow(g, lane, s);
                for (std::uint64_t b = 0; b < blocks; ++b) {
                    const std::uint64_t element = row * packed.cols + b * kLaneScaleBlock;
                    const std::uint64_t texel = (g * blocks + b) * kLaneScaleLanes + lane;
                    words[texel * 4 + s / 2] |= std::uint32_t(scaleHalf(element / group))
                                                << (16 * (s % 2));
                }
            }
        }
    }
    return words;
}

} // namespace inferscope::compute
