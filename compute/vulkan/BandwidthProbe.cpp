#include "compute/vulkan/BandwidthProbe.hpp"

#include "compute/vulkan/Buffer.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "compute/vulkan/Pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

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

    Buffer source(context, bytes, BufferKind::DeviceLocal, "bandwidth source");
    Buffer sums(context, std::uint64_t(lanes) * sizeof(float), BufferKind::DeviceLocal,
                "bandwidth sums");
    Pipeline pipeline(context, "stream_read", 2, 8, {workgroup, cpuDevice ? 1u : 0u},
                      {vk::Format::eR32G32B32A32Sfloat});
    CommandRecorder recorder(context, 8);
    struct Push {
        std::uint32_t vec4Count;
        std::uint32_t lanes;
    } push{static_cast<std::uint32_t>(bytes / 16), lanes};

    // The first pass also fills the source (device memory starts undefined) and warms up.
    recorder.begin();
    recorder.fill(source, 0x3f800000u); // 1.0f
    recorder.dispatch(pipeline, {{&source}, {&sums}}, push, (lanes + workgroup - 1) / workgroup);
    recorder.submitAndWait();

    BandwidthMeasurement best;
    best.bytes = bytes;
    best.seconds = std::numeric_limits<double>::infinity();
    for (int r = 0; r < std::max(1, repeats); ++r) {
        recorder.begin();
        recorder.dispatch(pipeline, {{&source}, {&sums}}, push,
                          (lanes + workgroup - 1) / workgroup);
        auto start = std::chrono::steady_clock::now();
        recorder.submitAndWait();
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best.seconds = std::min(best.seconds, seconds);
    }
    best.gigabytesPerSecond = double(bytes) / best.seconds / 1e9;
    return best;
}

} // namespace inferscope::compute
