#include "compute/formats/DeviceCodeLayout.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace inferscope::compute {

std::uint32_t codeRowBlockFor(const DeviceInfo& info, std::uint64_t rows) {
    return info.type == "cpu" && rows % kInterleavedRowBlock == 0 ? kInterleavedRowBlock : 0;
}

std::uint64_t codeRowsPerUploadSlice(std::uint64_t rowBytes, std::uint32_t rowBlock) {
    const std::uint64_t block = std::max<std::uint32_t>(rowBlock, 1);
    return std::max<std::uint64_t>(1, (8u << 20) / rowBytes / block) * block;
}

std::vector<std::uint32_t> interleaveCodeRows(std::span<const std::uint32_t> rowMajor,
                                              std::uint64_t rows, std::uint64_t rowWords,
                                              std::uint32_t rowBlock) {
    if (rowBlock != 0 && (!std::has_single_bit(rowBlock) || rows % rowBlock != 0))
        throw ComputeError("interleaveCodeRows: row block " + std::to_string(rowBlock) +
                           " is not a power of two dividing " + std::to_string(rows) + " rows");
    if (rowWords % kCodeUnitWords != 0 || rowMajor.size() != rows * rowWords)
        throw ComputeError("interleaveCodeRows: " + std::to_string(rowMajor.size()) +
                           " words are not " + std::to_string(rows) + " rows of " +
                           std::to_string(rowWords) + " words in whole 16-byte units");
    if (rowBlock == 0) return {rowMajor.begin(), rowMajor.end()};
    std::vector<std::uint32_t> out(rowMajor.size());
    const std::uint64_t units = rowWords / kCodeUnitWords;
    for (std::uint64_t r = 0; r < rows; ++r) {
        const std::uint64_t blockStart = r - r % rowBlock, inBlock = r % rowBlock;
        for (std::uint64_t u = 0; u < units; ++u) {
            const std::uint64_t target = blockStart * units + u * rowBlock + inBlock;
            std::copy_n(rowMajor.begin() + std::ptrdiff_t(r * rowWords + u * kCodeUnitWords),
                        kCodeUnitWords, out.begin() + std::ptrdiff_t(target * kCodeUnitWords));
        }
    }
    return out;
}

} // namespace inferscope::compute
