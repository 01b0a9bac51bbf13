#pragma once
// A second copy of an int4 group matrix's scales, of a q4_1 matrix's scale words, or of a
// planes matrix's high bits and scales (compute/formats/GgmlPlanes.hpp: PlaneLayout::laneWords
// words per lane and chunk of 32 columns), for the 8-lane, 8-rows-per-lane broadcast path of
// CPU devices (lavapipe), read in place of the packed ones.
//
// On lavapipe each texel fetch is a called routine whose cost hardly depends on the bytes it
// returns. With the packed layout (one fp16 per group of consecutive weights) a lane fetched
// one scale per row and 64 columns: 8 scale fetches per 8 code fetches. Here one texel holds
// the scales of all 8 rows of a lane for one block of 64 columns, in the kernel's slot order,
// so the lane fetches one per chunk of 32 columns instead (the chunk loop stays one chunk per
// turn: unrolled two-chunk turns cost lavapipe more than the fetches they save).
//
// Which rows a lane computes depends on the kernel (each kernel body's weightRow), so the
// copy is built for one kernel's order: texel (g * B + b) * 8 + L (B: blocks of 64 columns
// per padded row) holds, as fp16 s of its 8, the scale of row slotWeightRow(order,
// g * 64 + (s / 2) * 16 + 2 L + (s & 1)) at columns [64 b, 64 b + 64): the slot numbering of
// slotOf in shaders/matvec_core.glsl. It costs 16 bits per row and 64 columns of memory.
// q4_1 (one word, fp16 d and m, per row and block of 32 columns) takes two texels per lane and
// chunk of 32 columns instead, word s of ((g * C + c) * 8 + L) * 8 the word of slot s at chunk
// c (C: chunks per padded row): two fetches per chunk where the slots took 4 (one texel per
// slot and two chunks), and 32 bits per row and 32 columns of memory.
#include "compute/formats/GpuWeightPacking.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::compute {

constexpr std::uint32_t kLaneScaleLanes = 8;  // lanes per workgroup the layout is built for
constexpr std::uint32_t kLaneScaleSlots = 8;  // rows per lane
constexpr std::uint32_t kLaneScaleBlock = 64; // columns per scale (a multiple of the groups)

// Whether a matrix of `format` (alignedGroups: rows of a multiple of 64 weights) can carry
// the copy: the int4 group formats on aligned rows, q4_1 and the planes formats.
bool takesLaneScales(WeightFormat format, bool alignedGroups);
// The weight row slot `slot` of a `rows`-row matrix reads in `order` (slots past the last
// row read a valid row, as the kernels clamp them).
std::uint32_t slotWeightRow(const LaneScaleOrder& order, std::uint32_t slot, std::uint32_t rows);
// Words of the copy for a matrix of `rows` rows of `stride` (padded) columns.
std::uint64_t laneScaleWords(WeightFormat format, std::uint32_t rows, std::uint32_t stride);
// Words of the copy a matrix (or row chunk) of `rows` x `cols` in `format` gets where the
// device's kernels read copies (Engine::uploadFused, LoadFootprint): 0 for a format that
// takes none, or where the buffer would no longer fit limitBytes with it.
std::uint64_t laneScaleCopyWords(WeightFormat format, std::uint32_t rows, std::uint32_t cols,
                                 std::uint64_t limitBytes);
// The same summed over the chunks of planMatrixChunks (output rows; gateUpPairs: each chunk
// holds its gate and its up rows), in bytes.
std::uint64_t laneScaleCopyBytes(WeightFormat format, std::uint32_t cols,
                                 std::span<const RowRange> chunks, bool gateUpPairs,
                                 std::uint64_t limitBytes);
// The copy of packed's scales in `order` (whole texels). Throws ComputeError for a matrix
// that cannot take one (takesLaneScales) or an order that does not fit its rows.
std::vector<std::uint32_t> packLaneScales(const GpuPackedMatrix& packed,
                                          const LaneScaleOrder& order);

} // namespace inferscope::compute
