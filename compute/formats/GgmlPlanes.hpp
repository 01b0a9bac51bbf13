#pragma once
// The GPU layout of the GGUF block types beyond Q4_0 / Q4_1 / Q8_0 ("planes"): Q5_0, Q5_1,
// IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS. Every code, high bit and scale is the file's
// own value; only their places change, so the kernels (shaders/matvec_planes.glsl) can take a
// chunk of 32 columns apart with a few masks and shifts:
//
//  codes:   each weight's low 4 bits (2 for Q2_K / Q3_K) in the order of code_layout.glsl,
//           within each block of 32 elements "split": 4-bit codes, byte i holds element i in
//           its low nibble and element i + 16 in its high nibble (GGUF's own order for the
//           blocks of 32); 2-bit codes, element 4 L + b (L = 0..7, b = 0..3) sits in word
//           L / 4, byte b, bits 2 (L % 4). So lane group L of a chunk (its elements 4 L ...
//           4 L + 3) is one mask (and shift) of one word, a byte per element.
//  high:    from word formatWords, one word per block of 32 (two for Q6_K's 2-bit parts),
//           row-major: the high bit(s) of element 4 L + b at bit 8 b + L (Q6_K: word L / 4,
//           bits 8 b + 2 (L % 4)), so a shift and a mask put lane group L's high bits just
//           above its low bits in each byte.
//  records: then per block (32) or super-block (256) of the row-major element index, a fixed
//           number of words as stored: Q5_1 (d, m); Q4_K / Q5_K the 16-byte head (d, dmin,
//           12 bytes of 6-bit scales and mins); Q6_K its 16 int8 scales; Q3_K its 12 bytes of
//           6-bit scales; Q2_K its 16 scale bytes and (d, dmin); IQ4_XS (d, scales_h) and
//           scales_l.
//  halves:  then one fp16 per block where the type keeps d apart from its record: Q5_0,
//           IQ4_NL (d per 32), Q6_K, Q3_K (d per 256).
// The whole layout ends on a whole texel. Rows are padded to 64 columns; a file's types of
// 256 have rows of a multiple of 256. Quantized from values (a lab format on any model), they
// also take rows of a multiple of 64 with super-blocks running on across rows, as the int4
// groups do: stride == cols, so the row-major index is the unpadded one and every address
// above holds (chunks then start on a whole super-block: packedRowGranule). Bits per weight
// are the file's.
#include "compute/formats/GpuWeightPacking.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace inferscope::compute {

struct PlaneLayout {
    std::uint32_t codeBits = 4;    // low bits per weight in the code region: 4 or 2
    std::uint32_t highBits = 0;    // high bits per weight: 0, 1 or 2
    std::uint32_t group = 32;      // elements per record / half: 32 or 256
    std::uint32_t recordWords = 0; // words per group in the records region
    bool halfPerGroup = false;     // one fp16 per group after the records
    // Words per lane and chunk of 32 columns of the lane-scale copy (LaneScaleLayout.hpp):
    // what the 8 slots of a lane need besides their codes, as listed in GgmlPlanes.cpp.
    std::uint32_t laneWords = 0;
};

// The layout of a planes type; nullopt for other types.
std::optional<PlaneLayout> planeLayout(models::TensorType type);
// The planes type a format reads (nullopt for other formats).
std::optional<models::TensorType> planeType(WeightFormat format);

// Words of each region for `rows` rows of `stride` padded columns, and the total (texels).
struct PlaneSizes {
    std::uint64_t codeWords = 0, highWords = 0, recordWords = 0, halfWords = 0;
    std::uint64_t total() const;
};
PlaneSizes planeSizes(const PlaneLayout& layout, std::uint64_t rows, std::uint64_t stride);

// Packs the parts (stacked) into out (format, rows, cols, stride set): each part from its
// stored bytes when it has the type, else quantized from its f32 values (models::quantizeGgml).
// Throws ComputeError for rows the layout cannot hold (above) and parts that are not whole
// blocks.
void packPlanes(models::TensorType type, std::span<const MatrixPart> parts, GpuPackedMatrix& out);
// The rows `ranges` of a planes matrix, stacked in order (stackPackedRows).
GpuPackedMatrix stackPlaneRows(const GpuPackedMatrix& source, const PlaneLayout& layout,
                               std::span<const RowRange> ranges);
// One (row, chunk of 32 columns) of a planes matrix as the lane copy holds it per slot.
struct PlaneChunkExtras {
    std::uint32_t high[2] = {0, 0}; // the chunk's high-bit words
    std::uint32_t scaleWord = 0;    // Q5_1: (d, m); Q4_K / Q5_K / Q2_K: (d, dmin)
    std::uint16_t half = 0;         // Q5_0 / IQ4_NL / Q6_K / Q3_K: d
    std::uint8_t bytes[2] = {0, 0}; // the chunk's two sub-block scales (or scale and min)
};
PlaneChunkExtras planeChunkExtras(const GpuPackedMatrix& packed, const PlaneLayout& layout,
                                  std::uint64_t row, std::uint64_t chunk);

// Fills the lane-scale copy of a planes matrix (out: laneWords words per row group, chunk
// of 32 columns and lane, zeroed): slotRow(g, lane, s), the weight row of slot s of lane
// `lane` in row group g (LaneScaleLayout.cpp). Per lane and chunk, fields of 8 words (one per
// slot) or 4 words (8 halves), in the order the type's include reads them
// (shaders/dequant_<type>.glsl): the high words (one field per high word), the scale words,
// the halves, the scale byte pairs.
void packPlaneLaneWords(
    const GpuPackedMatrix& packed, const PlaneLayout& layout, std::uint64_t rowGroups,
    const std::function<std::uint64_t(std::uint64_t, std::uint32_t, std::uint32_t)>& slotRow,
    std::vector<std::uint32_t>& out);

} // namespace inferscope::compute
