#pragma once
// The Vulkan runtime's root: instance (with the Khronos validation layer when
// INFERSCOPE_VALIDATION=1), device enumeration and choice, the logical device with its
// compute queue, and the optional features this device offers (each with a plain fallback).
#include <vulkan/vulkan_raii.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::compute {

// Every failure of the GPU path: no device, a missing required feature, a lost device,
// out of memory, a fence that never signalled. The message says what to do next.
class ComputeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MemoryHeapInfo {
    std::uint64_t bytes = 0;
    bool deviceLocal = false;
    std::optional<std::uint64_t> budgetBytes; // VK_EXT_memory_budget, when present
    std::optional<std::uint64_t> usageBytes;
};

// What a device offers, as plain values (the CLI's `devices` command prints these).
struct DeviceInfo {
    std::uint32_t index = 0;
    std::string name;
    std::string type; // "discrete", "integrated", "virtual", "cpu", "other"
    std::uint32_t vendorId = 0;
    std::uint32_t deviceId = 0;
    std::string driver;
    std::uint32_t apiVersion = 0;
    std::vector<MemoryHeapInfo> heaps;
    std::uint32_t subgroupSize = 0;
    bool subgroupArithmetic = false; // subgroupAdd/Max in compute shaders
    bool subgroupShuffle = false;
    std::uint32_t maxSharedMemoryBytes = 0;
    std::uint32_t maxWorkgroupInvocations = 0;
    std::uint64_t maxStorageBufferRange = 0;
    std::uint64_t maxTexelBufferElements = 0; // texels one uniform texel buffer view may hold
    std::uint64_t maxMemoryAllocationSize = 0;
    // The most bytes one buffer binding may span: maxStorageBufferRange, capped by
    // maxMemoryAllocationSize and by a texel view of 32-bit texels (the matrix kernels read
    // weights as texel buffers) where the device reports them (0: not reported).
    std::uint64_t maxBindingBytes() const {
        std::uint64_t bytes = maxStorageBufferRange;
        if (maxMemoryAllocationSize) bytes = std::min(bytes, maxMemoryAllocationSize);
        if (maxTexelBufferElements) bytes = std::min(bytes, maxTexelBufferElements * 4);
        return bytes;
    }
    float timestampPeriodNs = 0.0f;
    bool timestamps = false;
    bool storage16Bit = false; // required
    bool shaderFloat16 = false;
    bool shaderInt8 = false;
    bool integerDotProduct = false;
    bool cooperativeMatrix = false;
    bool memoryBudget = false;
};

std::string apiVersionString(std::uint32_t version);

// Counts messages of the validation layer (errors and warnings) and keeps the text of the
// last few; tests assert errors() == 0.
class ValidationLog {
public:
    void record(bool isError, std::string message);
    std::uint32_t errors() const { return errors_.load(); }
    std::uint32_t warnings() const { return warnings_.load(); }
    std::vector<std::string> messages() const;

private:
    std::atomic<std::uint32_t> errors_{0};
    std::atomic<std::uint32_t> warnings_{0};
    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
};

struct ContextOptions {
    std::optional<std::uint32_t> deviceIndex; // else $INFERSCOPE_DEVICE, else the best device
    std::optional<bool> validation;           // else $INFERSCOPE_VALIDATION == "1"
};

// Lists every Vulkan device without creating a logical device.
std::vector<DeviceInfo> listDevices();

class VulkanContext {
public:
    explicit VulkanContext(const ContextOptions& options = {});
    VulkanContext(const VulkanContext&) = delete;
    VulkanContext& operator=(const VulkanContext&) = delete;

    const DeviceInfo& info() const { return info_; }
    bool validationEnabled() const { return validation_; }
    const ValidationLog& validationLog() const { return *log_; }

    const vk::raii::PhysicalDevice& physicalDevice() const { return physicalDevice_; }
    const vk::raii::Device& device() const { return device_; }
    const vk::raii::Queue& queue() const { return queue_; }
    std::uint32_t queueFamily() const { return queueFamily_; }
    const vk::raii::CommandPool& commandPool() const { return commandPool_; }

    // Current budget and usage per heap (refreshed on each call when VK_EXT_memory_budget
    // is present; otherwise the heap sizes and no usage).
    std::vector<MemoryHeapInfo> memoryHeaps() const;
    // Index of a memory type with `required` flags among typeBits, preferring `preferred`.
    std::optional<std::uint32_t> findMemoryType(std::uint32_t typeBits,
                                                vk::MemoryPropertyFlags required,
                                                vk::MemoryPropertyFlags preferred = {}) const;
    // Device-local memory that the host can also map (lavapipe, integrated GPUs, ReBAR):
    // uploads then write in place instead of going through a staging buffer.
    bool unifiedMemory() const { return unifiedMemory_; }

    // Bytes currently allocated through Buffer (all buffers), and the peak since reset.
    std::uint64_t allocatedBytes() const { return allocated_.load(); }
    std::uint64_t peakAllocatedBytes() const { return peak_.load(); }
    void resetPeak() { peak_.store(allocated_.load()); }
    void noteAllocation(std::int64_t delta) const;

private:
    bool validation_ = false;
    std::unique_ptr<ValidationLog> log_;
    vk::raii::Context context_;
    vk::raii::Instance instance_{nullptr};
    vk::raii::DebugUtilsMessengerEXT messenger_{nullptr};
    vk::raii::PhysicalDevice physicalDevice_{nullptr};
    vk::raii::Device device_{nullptr};
    vk::raii::Queue queue_{nullptr};
    vk::raii::CommandPool commandPool_{nullptr};
    std::uint32_t queueFamily_ = 0;
    DeviceInfo info_;
    vk::PhysicalDeviceMemoryProperties memoryProperties_;
    bool unifiedMemory_ = false;
    mutable std::atomic<std::uint64_t> allocated_{0};
    mutable std::atomic<std::uint64_t> peak_{0};
};

// Turns a vk::SystemError (or any exception from vulkan.hpp) into a ComputeError with a
// clear message; used at every call that can lose the device or run out of memory.
[[noreturn]] void rethrowVulkanError(const std::string& during);

} // namespace inferscope::compute
