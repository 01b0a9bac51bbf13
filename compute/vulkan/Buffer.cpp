#include "compute/vulkan/Buffer.hpp"

#include <atomic>
#include <utility>

namespace inferscope::compute {

namespace {
std::uint64_t nextSerial() {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;
}
std::string megabytes(std::uint64_t bytes) {
    return std::to_string(bytes / (1024 * 1024)) + " MiB";
}
} // namespace

Buffer::Buffer(const VulkanContext& context, std::uint64_t bytes, BufferKind kind,
               const std::string& label)
    : context_(&context), serial_(nextSerial()), size_(bytes), kind_(kind), label_(label) {
    if (bytes == 0) throw ComputeError("buffer '" + label + "' of zero bytes");
    const auto& info = context.info();
    if (info.maxMemoryAllocationSize && bytes > info.maxMemoryAllocationSize) {
        throw ComputeError("buffer '" + label + "' needs " + megabytes(bytes) +
                           ", more than this device allows in one allocation (" +
                           megabytes(info.maxMemoryAllocationSize) + ")");
    }
    if (bytes > info.maxStorageBufferRange) {
        throw ComputeError("buffer '" + label + "' needs " + megabytes(bytes) +
                           ", more than one storage-buffer binding may span on this device (" +
                           megabytes(info.maxStorageBufferRange) + ")");
    }
    try {
        const vk::BufferUsageFlags usage =
            vk::BufferUsageFlagBits::eStorageBuffer | vk::BufferUsageFlagBits::eUniformTexelBuffer |
            vk::BufferUsageFlagBits::eTransferSrc | vk::BufferUsageFlagBits::eTransferDst;
        buffer_ = context.device().createBuffer(
            {.size = bytes, .usage = usage, .sharingMode = vk::SharingMode::eExclusive});
        const auto requirements = buffer_.getMemoryRequirements();

        using F = vk::MemoryPropertyFlagBits;
        std::optional<std::uint32_t> type;
        bool hostVisible = false;
        switch (kind) {
        case BufferKind::DeviceLocal:
            if (context.unifiedMemory()) {
                type = context.findMemoryType(requirements.memoryTypeBits,
                                              F::eDeviceLocal | F::eHostVisible | F::eHostCoherent);
                hostVisible = type.has_value();
            }
            if (!type) type = context.findMemoryType(requirements.memoryTypeBits, F::eDeviceLocal);
            break;
        case BufferKind::Upload:
            type = context.findMemoryType(requirements.memoryTypeBits,
                                          F::eHostVisible | F::eHostCoherent, F::eDeviceLocal);
            hostVisible = true;
            break;
        case BufferKind::Readback:
            type = context.findMemoryType(requirements.memoryTypeBits,
                                          F::eHostVisible | F::eHostCoherent, F::eHostCached);
            hostVisible = true;
            break;
        }
        if (!type) throw ComputeError("no suitable memory type for buffer '" + label + "'");

        if (info.memoryBudget) {
            // VK_EXT_memory_budget: refuse cleanly before the driver fails or pages.
            const auto heaps = context.memoryHeaps();
            const auto heapIndex =
                context.physicalDevice().getMemoryProperties().memoryTypes[*type].heapIndex;
            const auto& heap = heaps.at(heapIndex);
            if (heap.budgetBytes && heap.usageBytes &&
                *heap.usageBytes + requirements.size > *heap.budgetBytes) {
                throw ComputeError("out of GPU memory: buffer '" + label + "' needs " +
                                   megabytes(requirements.size) + " but only " +
                                   megabytes(*heap.budgetBytes - *heap.usageBytes) +
                                   " of the heap's budget is left");
            }
        }
        memory_ = context.device().allocateMemory(
            {.allocationSize = requirements.size, .memoryTypeIndex = *type});
        buffer_.bindMemory(*memory_, 0);
        allocated_ = requirements.size;
        context.noteAllocation(static_cast<std::int64_t>(allocated_));
        if (hostVisible) mapped_ = memory_.mapMemory(0, VK_WHOLE_SIZE);
    } catch (...) {
        rethrowVulkanError("allocating buffer '" + label + "' (" + megabytes(bytes) + ")");
    }
}

Buffer::Buffer(Buffer&& other) noexcept {
    *this = std::move(other);
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        context_ = std::exchange(other.context_, nullptr);
        serial_ = std::exchange(other.serial_, 0);
        buffer_ = std::move(other.buffer_);
        memory_ = std::move(other.memory_);
        size_ = std::exchange(other.size_, 0);
        allocated_ = std::exchange(other.allocated_, 0);
        kind_ = other.kind_;
        label_ = std::move(other.label_);
        mapped_ = std::exchange(other.mapped_, nullptr);
        views_ = std::move(other.views_);
        other.views_.clear();
    }
    return *this;
}

Buffer::~Buffer() {
    release();
}

void Buffer::release() {
    if (context_ && allocated_) context_->noteAllocation(-static_cast<std::int64_t>(allocated_));
    allocated_ = 0;
    mapped_ = nullptr; // unmapped when the memory is freed
    views_.clear();    // before the buffer they view
    buffer_ = nullptr;
    memory_ = nullptr;
    size_ = 0;
}

void* Buffer::data() const {
    if (!mapped_) throw ComputeError("buffer '" + label_ + "' is not host-visible");
    return mapped_;
}

void Buffer::upload(const void* source, std::uint64_t bytes, std::uint64_t offset) {
    if (offset + bytes > size_) {
        throw ComputeError("upload of " + std::to_string(bytes) + " bytes at " +
                           std::to_string(offset) + " overruns buffer '" + label_ + "'");
    }
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(static_cast<std::uint8_t*>(mapped_) + offset, source, bytes);
        return;
    }
    Buffer staging(*context_, bytes, BufferKind::Upload, label_ + " (staging)");
    std::memcpy(staging.data(), source, bytes);
    submitAndWait(*context_, [&](vk::CommandBuffer commands) {
        commands.copyBuffer(staging.handle(), handle(),
                            vk::BufferCopy{.srcOffset = 0, .dstOffset = offset, .size = bytes});
    });
}

void Buffer::download(void* target, std::uint64_t bytes, std::uint64_t offset) const {
    if (offset + bytes > size_) {
        throw ComputeError("download of " + std::to_string(bytes) + " bytes at " +
                           std::to_string(offset) + " overruns buffer '" + label_ + "'");
    }
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(target, static_cast<const std::uint8_t*>(mapped_) + offset, bytes);
        return;
    }
    Buffer staging(*context_, bytes, BufferKind::Readback, label_ + " (readback)");
    submitAndWait(*context_, [&](vk::CommandBuffer commands) {
        commands.copyBuffer(handle(), staging.handle(),
                            vk::BufferCopy{.srcOffset = offset, .dstOffset = 0, .size = bytes});
    });
    std::memcpy(target, staging.data(), bytes);
}

vk::BufferView Buffer::texelView(vk::Format format, std::uint64_t offset,
                                 std::uint64_t range) const {
    if (!context_) throw ComputeError("texel view of an empty buffer");
    const ViewKey key{format, offset, range == VK_WHOLE_SIZE ? size_ - offset : range};
    auto found = views_.find(key);
    if (found == views_.end()) {
        try {
            found = views_
                        .emplace(key, context_->device().createBufferView({.buffer = *buffer_,
                                                                           .format = format,
                                                                           .offset = key.offset,
                                                                           .range = key.range}))
                        .first;
        } catch (...) {
            rethrowVulkanError("a texel view of buffer '" + label_ + "'");
        }
    }
    return *found->second;
}

void Buffer::fillZero() {
    if (mapped_) {
        std::memset(mapped_, 0, size_);
        return;
    }
    submitAndWait(*context_, [&](vk::CommandBuffer commands) {
        commands.fillBuffer(handle(), 0, VK_WHOLE_SIZE, 0);
    });
}

void waitForFence(const VulkanContext& context, const vk::raii::Fence& fence,
                  std::uint64_t timeoutNs, const std::string& during) {
    vk::Result result;
    try {
        result = context.device().waitForFences(*fence, VK_TRUE, timeoutNs);
    } catch (...) {
        rethrowVulkanError(during);
    }
    if (result == vk::Result::eTimeout) {
        throw ComputeError("GPU work did not finish within " +
                           std::to_string(timeoutNs / 1'000'000'000ull) + " s during " + during +
                           " (a hung shader or a device far too slow for this model)");
    }
}

void submitAndWait(const VulkanContext& context,
                   const std::function<void(vk::CommandBuffer)>& record, std::uint64_t timeoutNs) {
    try {
        auto buffers =
            context.device().allocateCommandBuffers({.commandPool = *context.commandPool(),
                                                     .level = vk::CommandBufferLevel::ePrimary,
                                                     .commandBufferCount = 1});
        auto& commands = buffers.front();
        commands.begin({.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
        record(*commands);
        commands.end();
        auto fence = context.device().createFence({});
        const vk::CommandBuffer handle = *commands;
        context.queue().submit(vk::SubmitInfo{.commandBufferCount = 1, .pCommandBuffers = &handle},
                               *fence);
        waitForFence(context, fence, timeoutNs, "a transfer");
    } catch (...) {
        rethrowVulkanError("a transfer");
    }
}

} // namespace inferscope::compute
