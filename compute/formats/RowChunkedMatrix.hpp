#pragma once
// A weight matrix held as row chunks, each its own buffer within the device's limits on one
// storage binding (maxStorageBufferRange) and one allocation (maxMemoryAllocationSize).
// Large vocabularies make the embedding table and the output head exceed them (Qwen2.5's
// 151,936 x 896 f16 table is 260 MiB; lavapipe binds at most 128 MiB), so every kernel that
// reads a matrix runs once per chunk, each dispatch told the first row its chunk holds.
#include "compute/formats/WeightFormat.hpp"

#include <cstdint>
#include <vector>

namespace inferscope::compute {

struct RowChunkedMatrix {
    // For a fused gate|up matrix a chunk of output rows [a, b) holds gate rows [a, b) and
    // then up rows [a, b): its DeviceMatrix has 2 (b - a) rows, and firstRows[i] = a.
    std::vector<DeviceMatrix> chunks;
    std::vector<std::uint32_t> firstRows; // the row (output index) each chunk starts at
    WeightFormat format = WeightFormat::F32;
    std::uint32_t rows = 0; // stored rows of the whole matrix (gate and up both counted)
    std::uint32_t cols = 0;

    bool empty() const { return chunks.empty(); }
    std::uint32_t chunkCount() const { return std::uint32_t(chunks.size()); }
    std::uint64_t bytes() const {
        std::uint64_t total = 0;
        for (const auto& chunk : chunks) total += chunk.bytes();
        return total;
    }
    std::uint64_t bytesRead() const {
        std::uint64_t total = 0;
        for (const auto& chunk : chunks) total += chunk.bytesRead();
        return total;
    }
};

// Row ranges [first, first + count) covering `rows` rows, each at most `maxRows` rows and
// (but the last) a multiple of `granule`. Throws ComputeError naming `what` when even one
// granule exceeds maxRows.
struct RowRange {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
};
std::vector<RowRange> planRowChunks(std::uint32_t rows, std::uint32_t maxRows,
                                    std::uint32_t granule, const std::string& what);

} // namespace inferscope::compute
