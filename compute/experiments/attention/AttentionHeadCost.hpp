#pragma once
// Chapter item 1: one attention head (head dimension 64) timed both ways on the Vulkan
// device. Uncached, a generation step rebuilds the whole n x n score matrix (written to and
// read back from device memory, 67 MB of fp32 at n = 4,096) and every output row; cached, it
// builds one 1 x n row (16 KB) for the new token. Both are checked against a CPU loop.
#include "compute/Table.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace inferscope::compute::experiments {

struct AttentionHeadOptions {
    std::vector<std::uint32_t> lengths = {256, 512, 1024, 2048, 4096};
    std::uint32_t headDim = 64;
    int repeats = 3; // timed runs per point after one untimed warm-up; the best is kept
    // Output rows checked against the CPU loop per uncached point (spread over the sequence,
    // first and last included); 0: every row.
    std::uint32_t checkedRows = 64;
    std::uint32_t seed = 7;
};

struct AttentionHeadPoint {
    std::uint32_t length = 0;
    std::uint64_t uncachedScoreBytes = 0; // n x n fp32
    std::uint64_t cachedScoreBytes = 0;   // 1 x n fp32
    double uncachedMilliseconds = 0;      // scores + softmax x values, best of the repeats
    double cachedMilliseconds = 0;
    float uncachedMaxError = 0; // largest |GPU - CPU| over the checked output values
    float cachedMaxError = 0;
    std::uint32_t checkedRows = 0; // uncached rows compared with the CPU loop
};

// Largest |GPU - CPU| accepted: outputs are softmax-weighted means of values near 1.
constexpr float kAttentionHeadTolerance = 1e-4f;

// Throws std::invalid_argument for a length whose n x n matrix exceeds one storage binding or
// a head dimension over 64; `progress` (optional) hears each length as it starts.
std::vector<AttentionHeadPoint>
measureAttentionHead(const VulkanContext& context, const AttentionHeadOptions& options,
                     const std::function<void(std::uint32_t length)>& progress = {});

// The CPU loop: causal softmax(q k^T * scale) v for query `row` (headDim outputs).
std::vector<float> attentionHeadRowReference(const std::vector<float>& q,
                                             const std::vector<float>& k,
                                             const std::vector<float>& v, std::uint32_t n,
                                             std::uint32_t headDim, std::uint32_t row);

Table attentionHeadTable(const std::vector<AttentionHeadPoint>& points, std::uint32_t headDim,
                         const std::string& device);

} // namespace inferscope::compute::experiments
