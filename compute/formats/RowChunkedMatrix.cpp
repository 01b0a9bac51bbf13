#include "compute/formats/RowChunkedMatrix.hpp"

#include <algorithm>

namespace inferscope::compute {

std::vector<RowRange> planRowChunks(std::uint32_t rows, std::uint32_t maxRows,
                                    std::uint32_t granule, const std::string& what) {
    granule = std::max<std::uint32_t>(granule, 1);
    const std::uint32_t perChunk = maxRows / granule * granule;
    if (perChunk == 0)
        throw ComputeError(what + ": " + std::to_string(granule) +
                           " rows must stay in one buffer, more than one storage binding holds");
    std::vector<RowRange> ranges;
    for (std::uint32_t first = 0; first < rows; first += perChunk)
        ranges.push_back({first, std::min(perChunk, rows - first)});
    return ranges;
}

} // namespace inferscope::compute
