#include "compute/vulkan/CommandRecorder.hpp"

#include <chrono>

namespace inferscope::compute {

CommandRecorder::CommandRecorder(const VulkanContext& context, std::uint32_t maxTimestamps)
    : context_(context), maxTimestamps_(maxTimestamps) {
    try {
        commandBuffers_ =
            vk::raii::CommandBuffers(context.device(), {.commandPool = *context.commandPool(),
                                                        .level = vk::CommandBufferLevel::ePrimary,
                                                        .commandBufferCount = 1});
        fence_ = context.device().createFence({});
        if (context.info().timestamps) {
            queryPool_ = context.device().createQueryPool(
                {.queryType = vk::QueryType::eTimestamp, .queryCount = maxTimestamps_});
        }
    } catch (...) {
        rethrowVulkanError("creating a command recorder");
    }
}

void CommandRecorder::begin(bool profile) {
    profile_ = profile && context_.info().timestamps;
    dispatches_ = 0;
    transfers_ = 0;
    timestampsWritten_ = 0;
    labels_.clear();
    timings_.clear();
    needsBarrier_ = false;
    auto& commands = commandBuffers_.front();
    commands.reset();
    commands.begin({.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
    recording_ = true;
    if (profile_) {
        commands.resetQueryPool(*queryPool_, 0, maxTimestamps_);
        commands.writeTimestamp(vk::PipelineStageFlagBits::eTopOfPipe, *queryPool_, 0);
        timestampsWritten_ = 1;
    }
}

void CommandRecorder::barrierIfNeeded() {
    if (!needsBarrier_) return;
    const vk::MemoryBarrier barrier{
        .srcAccessMask = vk::AccessFlagBits::eShaderWrite | vk::AccessFlagBits::eTransferWrite,
        .dstAccessMask = vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite |
                         vk::AccessFlagBits::eTransferRead | vk::AccessFlagBits::eTransferWrite};
    commandBuffers_.front().pipelineBarrier(
        vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer,
        vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer, {},
        barrier, {}, {});
}

void CommandRecorder::dispatch(Pipeline& pipeline, std::initializer_list<BufferBinding> buffers,
                               const void* pushConstants, std::uint32_t pushBytes,
                               std::uint32_t groupsX, std::uint32_t groupsY, std::uint32_t groupsZ,
                               const std::string& label) {
    if (!recording_) throw ComputeError("dispatch outside begin()/submitAndWait()");
    if (pushBytes != pipeline.pushConstantBytes()) {
        throw ComputeError("pipeline '" + pipeline.name() + "' expects " +
                           std::to_string(pipeline.pushConstantBytes()) +
                           " bytes of push constants, got " + std::to_string(pushBytes));
    }
    if (groupsX == 0 || groupsY == 0 || groupsZ == 0) return;
    const auto set = pipeline.descriptorSet({buffers.begin(), buffers.size()});
    auto& commands = commandBuffers_.front();
    barrierIfNeeded();
    commands.bindPipeline(vk::PipelineBindPoint::eCompute, pipeline.handle());
    commands.bindDescriptorSets(vk::PipelineBindPoint::eCompute, pipeline.layout(), 0, set, {});
    if (pushBytes) {
        vkCmdPushConstants(*commands, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes,
                           pushConstants);
    }
    commands.dispatch(groupsX, groupsY, groupsZ);
    needsBarrier_ = true;
    ++dispatches_;
    if (profile_ && timestampsWritten_ < maxTimestamps_) {
        commands.writeTimestamp(vk::PipelineStageFlagBits::eComputeShader, *queryPool_,
                                timestampsWritten_++);
        labels_.push_back(label.empty() ? pipeline.name() : label);
    }
}

void CommandRecorder::copy(const Buffer& source, const Buffer& target, std::uint64_t bytes,
                           std::uint64_t sourceOffset, std::uint64_t targetOffset,
                           const std::string& label) {
    if (!recording_) throw ComputeError("copy outside begin()/submitAndWait()");
    auto& commands = commandBuffers_.front();
    barrierIfNeeded();
    commands.copyBuffer(
        source.handle(), target.handle(),
        vk::BufferCopy{.srcOffset = sourceOffset, .dstOffset = targetOffset, .size = bytes});
    needsBarrier_ = true;
    ++transfers_;
    if (profile_ && timestampsWritten_ < maxTimestamps_) {
        commands.writeTimestamp(vk::PipelineStageFlagBits::eTransfer, *queryPool_,
                                timestampsWritten_++);
        labels_.push_back(label.empty() ? std::string("copy") : label);
    }
}

void CommandRecorder::fill(const Buffer& target, std::uint32_t value) {
    if (!recording_) throw ComputeError("fill outside begin()/submitAndWait()");
    auto& commands = commandBuffers_.front();
    barrierIfNeeded();
    commands.fillBuffer(target.handle(), 0, VK_WHOLE_SIZE, value);
    needsBarrier_ = true;
    ++transfers_;
}

void CommandRecorder::submitAndWait(std::uint64_t timeoutNs) {
    if (!recording_) throw ComputeError("submitAndWait() without begin()");
    recording_ = false;
    auto& commands = commandBuffers_.front();
    const auto start = std::chrono::steady_clock::now();
    try {
        // Make the results visible to the host (mapped readback buffers).
        const vk::MemoryBarrier toHost{.srcAccessMask = vk::AccessFlagBits::eShaderWrite |
                                                        vk::AccessFlagBits::eTransferWrite,
                                       .dstAccessMask = vk::AccessFlagBits::eHostRead};
        commands.pipelineBarrier(vk::PipelineStageFlagBits::eComputeShader |
                                     vk::PipelineStageFlagBits::eTransfer,
                                 vk::PipelineStageFlagBits::eHost, {}, toHost, {}, {});
        commands.end();
        context_.device().resetFences(*fence_);
        const vk::CommandBuffer handle = *commands;
        context_.queue().submit(vk::SubmitInfo{.commandBufferCount = 1, .pCommandBuffers = &handle},
                                *fence_);
    } catch (...) {
        rethrowVulkanError("submitting GPU work");
    }
    waitForFence(context_, fence_, timeoutNs, "a forward step");
    lastSubmitUs_ =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();

    if (profile_ && timestampsWritten_ > 1) {
        std::vector<std::uint64_t> stamps(timestampsWritten_);
        const auto result = vkGetQueryPoolResults(
            *context_.device(), *queryPool_, 0, timestampsWritten_,
            stamps.size() * sizeof(std::uint64_t), stamps.data(), sizeof(std::uint64_t),
            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        if (result == VK_SUCCESS) {
            const double period = context_.info().timestampPeriodNs;
            for (std::uint32_t i = 1; i < timestampsWritten_; ++i) {
                timings_.push_back(
                    {labels_[i - 1], double(stamps[i] - stamps[i - 1]) * period / 1000.0});
            }
        }
    }
}

} // namespace inferscope::compute
