#pragma once
// The order of a matrix's codes in device memory (the scales after them stay as packed).
//
// Row-major suits GPUs: the lanes of a subgroup read neighbouring words of one row. On CPU
// devices (lavapipe) each lane streams rows of its own, so a workgroup of 8 lanes x 8 rows
// reads 64 rows at once, 64 far-apart streams the core's prefetchers do not follow. There
// the codes of each block of kInterleavedRowBlock rows are interleaved 16 bytes (one texel)
// at a time, and a workgroup's reads become a few sequential streams.
//
// Interleaved with block B: unit u (16 bytes) of row r sits at unit
//   (r - r % B) * U + u * B + r % B      (U = units per row),
// so the buffer keeps its row-major size; B divides the row count (no padding rows).
// shaders/code_layout.glsl reads it.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::compute {

constexpr std::uint32_t kInterleavedRowBlock = 32;
constexpr std::uint32_t kCodeUnitWords = 4; // 16 bytes: one texel of the weight kernels

// The order uploads choose for a matrix of `rows` rows on a device: kInterleavedRowBlock on
// CPU devices when it divides the rows (every matrix of a real model), else 0 (row-major).
std::uint32_t codeRowBlockFor(const DeviceInfo& info, std::uint64_t rows);
// Rows per upload slice for rows of rowBytes bytes: about 8 MiB (at least one row), a whole
// number of row blocks, so each slice is reordered on its own and the host copy stays bounded.
std::uint64_t codeRowsPerUploadSlice(std::uint64_t rowBytes, std::uint32_t rowBlock);
// `rows` row-major code rows of rowWords words each (a multiple of kCodeUnitWords) in the
// device order of rowBlock (a power of two dividing rows, or 0 for row-major: a copy). Rows
// interleave only within their block, so a slice of whole blocks can be reordered on its
// own. Throws ComputeError for a bad shape.
std::vector<std::uint32_t> interleaveCodeRows(std::span<const std::uint32_t> rowMajor,
                                              std::uint64_t rows, std::uint64_t rowWords,
                                              std::uint32_t rowBlock);

} // namespace inferscope::compute
