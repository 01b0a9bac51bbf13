#pragma once
// A Vulkan buffer with its own memory (RAII). DeviceLocal buffers are filled through a
// staging buffer unless the device's local memory is host-visible (lavapipe, integrated
// GPUs), in which case they are mapped and written in place.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <span>
#include <string>

namespace inferscope::compute {

enum class BufferKind {
    DeviceLocal, // weights, KV cache, activations
    Upload,      // host-visible, written by the host every step (token ids, block tables)
    Readback,    // host-visible (cached when possible), read by the host (logits)
};

class Buffer {
public:
    Buffer() = default;
    // `label` names the buffer in errors (e.g. "blk.3.attn_qkv").
    Buffer(const VulkanContext& context, std::uint64_t bytes, BufferKind kind,
           const std::string& label);
    Buffer(Buffer&&) noexcept;
    Buffer& operator=(Buffer&&) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();

    explicit operator bool() const { return size_ != 0; }
    vk::Buffer handle() const { return *buffer_; }
    // Unique to this buffer for the life of the process (a moved buffer keeps it): caches
    // key on it, because a driver may give a new buffer a destroyed one's handle (lavapipe
    // does), and a set cached for the old one would hold its destroyed texel views.
    std::uint64_t serial() const { return serial_; }
    std::uint64_t size() const { return size_; }
    BufferKind kind() const { return kind_; }
    const std::string& label() const { return label_; }
    bool mapped() const { return mapped_ != nullptr; }
    // Host pointer of a mapped buffer (throws otherwise).
    void* data() const;

    void upload(const void* source, std::uint64_t bytes, std::uint64_t offset = 0);
    void download(void* target, std::uint64_t bytes, std::uint64_t offset = 0) const;
    void fillZero();
    // A view of [offset, offset + range) as texels of `format`, for the kernels that read
    // this buffer as a uniform texel buffer (created on first use, owned by the buffer).
    vk::BufferView texelView(vk::Format format, std::uint64_t offset, std::uint64_t range) const;

    template <typename T> void upload(std::span<const T> values, std::uint64_t offset = 0) {
        upload(values.data(), values.size_bytes(), offset);
    }
    template <typename T> std::vector<T> read(std::uint64_t count, std::uint64_t offset = 0) const {
        std::vector<T> values(count);
        download(values.data(), count * sizeof(T), offset);
        return values;
    }

private:
    void release();

    const VulkanContext* context_ = nullptr;
    std::uint64_t serial_ = 0;
    vk::raii::Buffer buffer_{nullptr};
    vk::raii::DeviceMemory memory_{nullptr};
    std::uint64_t size_ = 0;
    std::uint64_t allocated_ = 0;
    BufferKind kind_ = BufferKind::DeviceLocal;
    std::string label_;
    void* mapped_ = nullptr;
    struct ViewKey {
        vk::Format format;
        std::uint64_t offset;
        std::uint64_t range;
        auto operator<=>(const ViewKey&) const = default;
    };
    mutable std::map<ViewKey, vk::raii::BufferView> views_;
};

// Records commands into a fresh command buffer, submits, and waits (bounded) for them:
// uploads through staging, and tests.
void submitAndWait(const VulkanContext& context,
                   const std::function<void(vk::CommandBuffer)>& record,
                   std::uint64_t timeoutNs = 30'000'000'000ull);

// Waits for a fence; a timeout or a lost device becomes a ComputeError.
void waitForFence(const VulkanContext& context, const vk::raii::Fence& fence,
                  std::uint64_t timeoutNs, const std::string& during);

} // namespace inferscope::compute
