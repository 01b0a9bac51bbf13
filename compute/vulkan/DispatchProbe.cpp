#include "compute/vulkan/DispatchProbe.hpp"

#include "compute/vulkan/Buffer.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "compute/vulkan/Pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace inferscope::compute {

DispatchFloorMeasurement measureDispatchFloor(const VulkanContext& context,
                                              std::uint32_t dispatches, int repeats) {
    dispatches = std::max<std::uint32_t>(dispatches, 1);
    const DeviceInfo& info = context.info();
    const std::uint32_t lanes = std::max<std::uint32_t>(info.subgroupSize, 1);
    // The bandwidth probe's kernel with one texel per lane: the work is negligible, what is
    // left is binding, barrier and launch, the part of a dispatch that does not scale.
    Buffer source(context, std::uint64_t(lanes) * 16, BufferKind::DeviceLocal, "dispatch source");
    Buffer sums(context, std::uint64_t(lanes) * sizeof(float), BufferKind::DeviceLocal,
                "dispatch sums");
    Pipeline pipeline(context, "stream_read", 2, 8, {lanes, 1u}, {vk::Format::eR32G32B32A32Sfloat});
    CommandRecorder recorder(context, 8);
    struct Push {
        std::uint32_t vec4Count;
        std::uint32_t lanes;
    } push{lanes, lanes};

    auto record = [&] {
        recorder.begin();
        for (std::uint32_t i = 0; i < dispatches; ++i)
            recorder.dispatch(pipeline, {{&source}, {&sums}}, push, 1);
    };
    // Untimed first submission: fills the source and creates the pipeline's state.
    recorder.begin();
    recorder.fill(source, 0);
    recorder.dispatch(pipeline, {{&source}, {&sums}}, push, 1);
    recorder.submitAndWait();

    DispatchFloorMeasurement best;
    best.dispatches = dispatches;
    best.seconds = std::numeric_limits<double>::infinity();
    for (int r = 0; r < std::max(1, repeats); ++r) {
        record();
        const auto start = std::chrono::steady_clock::now();
        recorder.submitAndWait();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best.seconds = std::min(best.seconds, seconds);
    }
    best.microsecondsPerDispatch = best.seconds / dispatches * 1e6;
    return best;
}

} // namespace inferscope::compute
