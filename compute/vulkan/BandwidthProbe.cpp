#include "compute/vulkan/BandwidthProbe.hpp"

#include "compute/vulkan/StreamReadKernel.hpp"

#include <algorithm>
#include <cstdio>

namespace inferscope::compute {

std::string BandwidthMeasurement::method() const {
    std::string list;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (i) list += i + 1 == sizes.size() ? " and " : ", ";
        list += std::to_string(sizes[i] >> 20) + " MiB";
    }
    char spread[96];
    std::snprintf(spread, sizeof spread, "; passes ranged %.1f-%.1f GB/s",
                  slowestGigabytesPerSecond, gigabytesPerSecond);
    return "fastest of " + std::to_string(passesPerSize) + " passes over each of " + list + spread;
}

BandwidthMeasurement measureReadBandwidth(const VulkanContext& context,
                                          const std::vector<std::uint64_t>& sizes, int repeats) {
    const DeviceInfo& info = context.info();
    const bool cpuDevice = info.type == "cpu";
    // A CPU device runs a few lanes per core; a GPU needs many thousands in flight.
    const std::uint32_t workgroup = cpuDevice ? std::max<std::uint32_t>(info.subgroupSize, 1) : 256;
    const std::uint32_t lanes = cpuDevice ? workgroup * 16 : 256 * 1024;

    BandwidthMeasurement result;
    result.passesPerSize = std::max(1, repeats);
    for (std::uint64_t requested : sizes) {
        // maxBindingBytes also keeps the texel view (read as vec4 texels) within the limit.
        std::uint64_t bytes =
            std::min<std::uint64_t>({requested, info.maxBindingBytes(), 0xFFFFFFFFull * 16});
        bytes = bytes / 16 * 16;
        if (bytes == 0 ||
            std::find(result.sizes.begin(), result.sizes.end(), bytes) != result.sizes.end())
            continue;
        result.sizes.push_back(bytes);
        StreamReadKernel kernel(context, bytes, workgroup, lanes, cpuDevice);
        for (double seconds : kernel.submitSeconds(1, result.passesPerSize)) {
            const double rate = double(bytes) / seconds / 1e9;
            if (rate > result.gigabytesPerSecond) {
                result.gigabytesPerSecond = rate;
                result.seconds = seconds;
                result.bytes = bytes;
            }
            if (result.slowestGigabytesPerSecond == 0 || rate < result.slowestGigabytesPerSecond)
                result.slowestGigabytesPerSecond = rate;
        }
    }
    return result;
}

} // namespace inferscope::compute
