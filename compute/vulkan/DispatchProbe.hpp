#pragma once
// Measures the fixed cost of one dispatch on a device: a run of near-empty dispatches, each
// behind the compute->compute barrier every engine step uses, timed from submit to fence.
// `bench` adds dispatches x this floor to the decode roofline: on lavapipe a dispatch costs
// tens of microseconds whatever it computes, so a step of 150 small dispatches cannot reach
// the bandwidth bound alone.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>

namespace inferscope::compute {

struct DispatchFloorMeasurement {
    std::uint32_t dispatches = 0; // per timed submission
    double seconds = 0;           // best submission (submit to fence)
    double microsecondsPerDispatch = 0;
};

// Records `dispatches` one-workgroup dispatches that each read one texel per lane, with a
// barrier between each and the next; `repeats` submissions, the best one wins.
DispatchFloorMeasurement measureDispatchFloor(const VulkanContext& context,
                                              std::uint32_t dispatches = 256, int repeats = 5);

} // namespace inferscope::compute
