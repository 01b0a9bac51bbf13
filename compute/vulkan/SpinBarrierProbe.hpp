#pragma once
// What a wait between phases costs inside one dispatch, against the dispatch floor
// (DispatchProbe) that a new dispatch per phase costs: `bench` prints both, so the device
// table says how much of the floor a persistent kernel (workgroups that stay and wait for
// each other between a layer's phases) could win back. Measured only where the workgroups of
// one dispatch run at the same time; otherwise `measured` is false and `reason` says why.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <string>

namespace inferscope::compute {

struct SpinBarrierMeasurement {
    bool measured = false;
    std::string reason; // why not, when not measured
    std::uint32_t workgroups = 0;
    std::uint32_t phases = 0;        // of the longer run; the shorter has a third of them
    double microsecondsPerPhase = 0; // (longer run - shorter run) / extra phases, best runs
};

// Two workgroups of one subgroup each, runs of `phases` / 3 and `phases` phases (at most
// 20000: llvmpipe's loop limiter), the best of `repeats` submissions each.
SpinBarrierMeasurement measureSpinBarrier(const VulkanContext& context, std::uint32_t phases = 3000,
                                          int repeats = 3);

} // namespace inferscope::compute
