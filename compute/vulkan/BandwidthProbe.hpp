#pragma once
// Measures the device's sustained read bandwidth with a streaming kernel, so `bench` can
// state the decode roofline: a decode step must read every weight once, so tokens/s can be
// at most bandwidth / weight bytes.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::compute {

struct BandwidthMeasurement {
    std::vector<std::uint64_t> sizes; // bytes of each source buffer, after the device caps
    int passesPerSize = 0;
    std::uint64_t bytes = 0;              // read by the fastest pass
    double seconds = 0;                   // the fastest pass (submit to fence)
    double gigabytesPerSecond = 0;        // of the fastest pass: the figure rooflines use
    double slowestGigabytesPerSecond = 0; // of the slowest: how far the machine drifted

    // How it was measured, in words, for the tables that print the figure.
    std::string method() const;
};

// Reads a buffer of each size (capped by the device limits) `repeats` times, one pass per
// submission; the fastest pass over all sizes wins. Several sizes, each past a CPU's
// last-level cache (32 MiB on the machine the figures in the docs come from; lavapipe binds
// at most 128 MiB), and several passes: on a shared machine one pass can come in at half
// the bandwidth of the next.
BandwidthMeasurement measureReadBandwidth(const VulkanContext& context,
                                          const std::vector<std::uint64_t>& sizes = {64ull << 20,
                                                                                     128ull << 20},
                                          int repeats = 4);

} // namespace inferscope::compute
