#include "compute/vulkan/BandwidthProbe.hpp"

#include "compute/vulkan/StreamReadKernel.hpp"

#include <algorithm>

namespace inferscope::compute {

BandwidthMeasurement measureReadBandwidth(const VulkanContext& context, std::uint64_t bytes,
                                          int repeats) {
    const DeviceInfo& info = context.info();
    // maxBindingBytes also keeps the texel view (read as vec4 texels) within the device limit.
    bytes = std::min<std::uint64_t>({bytes, info.maxBindingBytes(), 0xFFFFFFFFull * 16});
    bytes = bytes / 16 * 16;
    const bool cpuDevice = info.type == "cpu";
    // A CPU device runs a few lanes per core; a GPU needs many thousands in flight.
    const std::uint32_t workgroup = cpuDevice ? std::max<std::uint32_t>(info.subgroupSize, 1) : 256;
    const std::uint32_t lanes = cpuDevice ? workgroup * 16 : 256 * 1024;

    StreamReadKernel kernel(context, bytes, workgroup, lanes, cpuDevice);
    BandwidthMeasurement best;
    best.bytes = bytes;
    best.seconds = kernel.bestSubmitSeconds(1, repeats);
    best.gigabytesPerSecond = double(bytes) / best.seconds / 1e9;
    return best;
}

} // namespace inferscope::compute
