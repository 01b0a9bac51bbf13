#pragma once
// Records a sequence of dispatches into one command buffer, each separated from the
// previous by a compute->compute memory barrier, submits it and waits with a bounded
// fence wait. In profiling mode a timestamp follows every dispatch, so each kernel's GPU
// time is known (the barriers serialize the work anyway).
#include "compute/vulkan/Pipeline.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace inferscope::compute {

struct KernelTiming {
    std::string label; // what the dispatch did, e.g. "attention" or "ffn_down"
    double microseconds = 0.0;
};

class CommandRecorder {
public:
    explicit CommandRecorder(const VulkanContext& context, std::uint32_t maxTimestamps = 4096);

    // Starts a new recording (the previous one must have been submitted and waited for).
    void begin(bool profile = false);
    void dispatch(Pipeline& pipeline, std::initializer_list<BufferBinding> buffers,
                  const void* pushConstants, std::uint32_t pushBytes, std::uint32_t groupsX,
                  std::uint32_t groupsY = 1, std::uint32_t groupsZ = 1,
                  const std::string& label = {});
    template <typename Push>
    void dispatch(Pipeline& pipeline, std::initializer_list<BufferBinding> buffers,
                  const Push& push, std::uint32_t groupsX, std::uint32_t groupsY = 1,
                  std::uint32_t groupsZ = 1, const std::string& label = {}) {
        dispatch(pipeline, buffers, &push, sizeof(Push), groupsX, groupsY, groupsZ, label);
    }
    // A copy between buffers, ordered after the previous dispatch like any other step; in
    // profiling mode it is timed under `label` ("copy" when empty) like a dispatch.
    void copy(const Buffer& source, const Buffer& target, std::uint64_t bytes,
              std::uint64_t sourceOffset = 0, std::uint64_t targetOffset = 0,
              const std::string& label = {});
    // Fills a buffer with a 32-bit value (e.g. zeroes a probe), ordered like a dispatch.
    void fill(const Buffer& target, std::uint32_t value);
    // Ends, submits and waits (timeoutNs bounds the wait; then a ComputeError).
    void submitAndWait(std::uint64_t timeoutNs = 60'000'000'000ull);

    std::uint32_t dispatchCount() const { return dispatches_; }
    std::uint32_t transferCount() const { return transfers_; } // copies and fills

    bool profiling() const { return profile_; }
    // After submitAndWait in profiling mode: one entry per dispatch, in order.
    const std::vector<KernelTiming>& timings() const { return timings_; }
    // Wall time of the last submit until the fence signalled, in microseconds.
    double lastSubmitMicroseconds() const { return lastSubmitUs_; }

private:
    void barrierIfNeeded();

    const VulkanContext& context_;
    vk::raii::CommandBuffers commandBuffers_{nullptr};
    vk::raii::Fence fence_{nullptr};
    vk::raii::QueryPool queryPool_{nullptr};
    std::uint32_t maxTimestamps_;
    bool profile_ = false;
    bool recording_ = false;
    bool needsBarrier_ = false;
    std::uint32_t dispatches_ = 0;
    std::uint32_t transfers_ = 0;
    std::uint32_t timestampsWritten_ = 0;
    std::vector<std::string> labels_;
    std::vector<KernelTiming> timings_;
    double lastSubmitUs_ = 0.0;
};

} // namespace inferscope::compute
