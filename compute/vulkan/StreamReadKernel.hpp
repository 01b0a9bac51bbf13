#pragma once
// The stream_read kernel (shaders/stream_read.comp) with its buffers, set up once for the
// device probes: BandwidthProbe times one long pass, DispatchProbe many near-empty ones.
// Both want the same thing measured the same way: the best of several submissions, from
// submit to fence, after an untimed one that fills the source and warms the pipeline.
#include "compute/vulkan/Buffer.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "compute/vulkan/Pipeline.hpp"

#include <cstdint>
#include <vector>

namespace inferscope::compute {

class StreamReadKernel {
public:
    // `lanes` lanes in workgroups of `workgroup` sum a source of `bytes` (a multiple of 16);
    // `contiguous`: each lane reads its own stretch (CPU devices) rather than a stride.
    StreamReadKernel(const VulkanContext& context, std::uint64_t bytes, std::uint32_t workgroup,
                     std::uint32_t lanes, bool contiguous);

    // Seconds of each of `repeats` submissions, each of `passes` passes over the source
    // recorded one after the other (the engine's barrier between each).
    std::vector<double> submitSeconds(std::uint32_t passes, int repeats);
    // The fastest of them.
    double bestSubmitSeconds(std::uint32_t passes, int repeats);

private:
    void recordPass();

    struct Push {
        std::uint32_t vec4Count;
        std::uint32_t lanes;
    };
    Buffer source_;
    Buffer sums_;
    Pipeline pipeline_;
    CommandRecorder recorder_;
    Push push_;
    std::uint32_t groups_;
};

} // namespace inferscope::compute
