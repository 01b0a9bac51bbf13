#pragma once
// Measures the device's sustained read bandwidth with a streaming kernel, so `bench` can
// state the decode roofline: a decode step must read every weight once, so tokens/s can be
// at most bandwidth / weight bytes.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>

namespace inferscope::compute {

struct BandwidthMeasurement {
    std::uint64_t bytes = 0; // read per pass
    double seconds = 0;      // best pass (submit to fence)
    double gigabytesPerSecond = 0;
};

// Reads a buffer of `bytes` (capped by the device limits) `repeats` times; best pass wins.
BandwidthMeasurement measureReadBandwidth(const VulkanContext& context,
                                          std::uint64_t bytes = 256ull << 20, int repeats = 3);

} // namespace inferscope::compute
