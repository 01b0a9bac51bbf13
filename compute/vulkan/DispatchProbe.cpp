#include "compute/vulkan/DispatchProbe.hpp"

#include "compute/vulkan/StreamReadKernel.hpp"

#include <algorithm>

namespace inferscope::compute {

DispatchFloorMeasurement measureDispatchFloor(const VulkanContext& context,
                                              std::uint32_t dispatches, int repeats) {
    dispatches = std::max<std::uint32_t>(dispatches, 1);
    const std::uint32_t lanes = std::max<std::uint32_t>(context.info().subgroupSize, 1);
    // The bandwidth probe's kernel with one texel per lane: the work is negligible, what is
    // left is binding, barrier and launch, the part of a dispatch that does not scale.
    StreamReadKernel kernel(context, std::uint64_t(lanes) * 16, lanes, lanes, true);
    DispatchFloorMeasurement best;
    best.dispatches = dispatches;
    best.seconds = kernel.bestSubmitSeconds(dispatches, repeats);
    best.microsecondsPerDispatch = best.seconds / dispatches * 1e6;
    return best;
}

} // namespace inferscope::compute
