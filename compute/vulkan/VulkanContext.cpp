#include "compute/vulkan/VulkanContext.hpp"

#include "compute/vulkan/DeviceChoice.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace inferscope::compute {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool envFlag(const char* name) {
    const char* value = std::getenv(name);
    return value && std::strcmp(value, "1") == 0;
}

std::string deviceTypeName(vk::PhysicalDeviceType type) {
    switch (type) {
    case vk::PhysicalDeviceType::eDiscreteGpu:
        return "discrete";
    case vk::PhysicalDeviceType::eIntegratedGpu:
        return "integrated";
    case vk::PhysicalDeviceType::eVirtualGpu:
        return "virtual";
    case vk::PhysicalDeviceType::eCpu:
        return "cpu";
    default:
        return "other";
    }
}

// Lower is preferred: a real GPU beats lavapipe.
int deviceRank(const std::string& type) {
    if (type == "discrete") return 0;
    if (type == "integrated") return 1;
    if (type == "virtual") return 2;
    if (type == "cpu") return 3;
    return 4;
}

bool hasExtension(const std::vector<vk::ExtensionProperties>& extensions, const char* name) {
    return std::any_of(extensions.begin(), extensions.end(), [&](const auto& e) {
        return std::strcmp(e.extensionName.data(), name) == 0;
    });
}

DeviceInfo describe(const vk::raii::PhysicalDevice& device, std::uint32_t index) {
    DeviceInfo info;
    info.index = index;
    const auto extensions = device.enumerateDeviceExtensionProperties();
    info.memoryBudget = hasExtension(extensions, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    info.cooperativeMatrix = hasExtension(extensions, "VK_KHR_cooperative_matrix") ||
                             hasExtension(extensions, "VK_NV_cooperative_matrix");

    const auto basic = device.getProperties();
    info.apiVersion = basic.apiVersion;
    info.name = basic.deviceName.data();
    info.type = deviceTypeName(basic.deviceType);
    info.vendorId = basic.vendorID;
    info.deviceId = basic.deviceID;
    info.maxSharedMemoryBytes = basic.limits.maxComputeSharedMemorySize;
    info.maxWorkgroupInvocations = basic.limits.maxComputeWorkGroupInvocations;
    info.maxStorageBufferRange = basic.limits.maxStorageBufferRange;
    info.maxTexelBufferElements = basic.limits.maxTexelBufferElements;
    info.timestampPeriodNs = basic.limits.timestampPeriod;

    if (basic.apiVersion >= VK_API_VERSION_1_2) {
        auto properties =
            device
                .getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceVulkan11Properties,
                                vk::PhysicalDeviceVulkan12Properties>();
        const auto& v11 = properties.get<vk::PhysicalDeviceVulkan11Properties>();
        const auto& v12 = properties.get<vk::PhysicalDeviceVulkan12Properties>();
        info.subgroupSize = v11.subgroupSize;
        info.subgroupArithmetic =
            (v11.subgroupSupportedStages & vk::ShaderStageFlagBits::eCompute) &&
            (v11.subgroupSupportedOperations & vk::SubgroupFeatureFlagBits::eArithmetic) &&
            (v11.subgroupSupportedOperations & vk::SubgroupFeatureFlagBits::eBasic);
        info.subgroupShuffle = info.subgroupArithmetic && (v11.subgroupSupportedOperations &
                                                           vk::SubgroupFeatureFlagBits::eShuffle);
        info.maxMemoryAllocationSize = v11.maxMemoryAllocationSize;
        info.driver = std::string(v12.driverName.data()) + " " + v12.driverInfo.data();

        auto features =
            device.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan11Features,
                                vk::PhysicalDeviceVulkan12Features>();
        info.storage16Bit =
            features.get<vk::PhysicalDeviceVulkan11Features>().storageBuffer16BitAccess;
        const auto& f12 = features.get<vk::PhysicalDeviceVulkan12Features>();
        info.shaderFloat16 = f12.shaderFloat16;
        info.shaderInt8 = f12.shaderInt8;
        if (basic.apiVersion >= VK_API_VERSION_1_3) {
            auto f13 = device.getFeatures2<vk::PhysicalDeviceFeatures2,
                                           vk::PhysicalDeviceVulkan13Features>();
            info.integerDotProduct =
                f13.get<vk::PhysicalDeviceVulkan13Features>().shaderIntegerDotProduct;
        }
    }

    const auto queues = device.getQueueFamilyProperties();
    for (const auto& family : queues) {
        if ((family.queueFlags & vk::QueueFlagBits::eCompute) && family.timestampValidBits > 0) {
            info.timestamps = true;
        }
    }

    const auto memory = device.getMemoryProperties();
    for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
        MemoryHeapInfo heap;
        heap.bytes = memory.memoryHeaps[i].size;
        heap.deviceLocal = bool(memory.memoryHeaps[i].flags & vk::MemoryHeapFlagBits::eDeviceLocal);
        info.heaps.push_back(heap);
    }
    if (info.memoryBudget) {
        auto budget = device.getMemoryProperties2<vk::PhysicalDeviceMemoryProperties2,
                                                  vk::PhysicalDeviceMemoryBudgetPropertiesEXT>();
        const auto& b = budget.get<vk::PhysicalDeviceMemoryBudgetPropertiesEXT>();
        for (std::size_t i = 0; i < info.heaps.size(); ++i) {
            info.heaps[i].budgetBytes = b.heapBudget[i];
            info.heaps[i].usageBytes = b.heapUsage[i];
        }
    }
    return info;
}

VKAPI_ATTR VkBool32 VKAPI_CALL onValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* userData) {
    auto* log = static_cast<ValidationLog*>(userData);
    const bool isError = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    log->record(isError, data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
}

vk::raii::Instance createInstance(const vk::raii::Context& context, bool validation) {
    const vk::ApplicationInfo app{.pApplicationName = "InferScope",
                                  .applicationVersion = 1,
                                  .pEngineName = "InferScope",
                                  .engineVersion = 1,
                                  .apiVersion = VK_API_VERSION_1_3};
    std::vector<const char*> layers;
    std::vector<const char*> extensions;
    if (validation) {
        const auto available = context.enumerateInstanceLayerProperties();
        const bool found = std::any_of(available.begin(), available.end(), [](const auto& l) {
            return std::strcmp(l.layerName.data(), kValidationLayer) == 0;
        });
        if (!found) {
            throw ComputeError("INFERSCOPE_VALIDATION=1 but the Khronos validation layer is not "
                               "installed (Debian: apt install vulkan-validationlayers)");
        }
        layers.push_back(kValidationLayer);
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    vk::InstanceCreateFlags flags;
    const auto instanceExtensions = context.enumerateInstanceExtensionProperties();
    if (hasExtension(instanceExtensions, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
        flags |= vk::InstanceCreateFlagBits::eEnumeratePortabilityKHR;
    }
    const vk::InstanceCreateInfo createInfo{
        .flags = flags,
        .pApplicationInfo = &app,
        .enabledLayerCount = static_cast<std::uint32_t>(layers.size()),
        .ppEnabledLayerNames = layers.data(),
        .enabledExtensionCount = static_cast<std::uint32_t>(extensions.size()),
        .ppEnabledExtensionNames = extensions.data()};
    return vk::raii::Instance(context, createInfo);
}

} // namespace

std::string apiVersionString(std::uint32_t version) {
    std::ostringstream out;
    out << VK_API_VERSION_MAJOR(version) << '.' << VK_API_VERSION_MINOR(version) << '.'
        << VK_API_VERSION_PATCH(version);
    return out.str();
}

void ValidationLog::record(bool isError, std::string message) {
    (isError ? errors_ : warnings_).fetch_add(1);
    std::lock_guard lock(mutex_);
    if (messages_.size() < 64) messages_.push_back((isError ? "error: " : "warning: ") + message);
}

std::vector<std::string> ValidationLog::messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
}

[[noreturn]] void rethrowVulkanError(const std::string& during) {
    try {
        throw;
    } catch (const ComputeError&) {
        throw;
    } catch (const vk::DeviceLostError& e) {
        throw ComputeError("Vulkan device lost during " + during + " (" + e.what() +
                           "): the driver reset the GPU; restart the run, and try a smaller "
                           "batch or another device");
    } catch (const vk::OutOfDeviceMemoryError& e) {
        throw ComputeError("out of GPU memory during " + during + " (" + e.what() +
                           "): use a smaller model, context or batch");
    } catch (const vk::OutOfHostMemoryError& e) {
        throw ComputeError("out of host memory during " + during + " (" + e.what() + ")");
    } catch (const vk::SystemError& e) {
        throw ComputeError("Vulkan error during " + during + ": " + e.what());
    }
}

std::vector<DeviceInfo> listDevices() {
    try {
        vk::raii::Context context;
        auto instance = createInstance(context, false);
        std::vector<DeviceInfo> result;
        std::uint32_t index = 0;
        for (const auto& device : instance.enumeratePhysicalDevices()) {
            result.push_back(describe(device, index++));
        }
        return result;
    } catch (...) {
        rethrowVulkanError("device enumeration");
    }
}

VulkanContext::VulkanContext(const ContextOptions& options)
    : log_(std::make_unique<ValidationLog>()) {
    validation_ = options.validation.value_or(envFlag("INFERSCOPE_VALIDATION"));
    try {
        instance_ = createInstance(context_, validation_);
        if (validation_) {
            const vk::DebugUtilsMessengerCreateInfoEXT messengerInfo{
                .messageSeverity = vk::DebugUtilsMessageSeverityFlagBitsEXT::eError |
                                   vk::DebugUtilsMessageSeverityFlagBitsEXT::eWarning,
                .messageType = vk::DebugUtilsMessageTypeFlagBitsEXT::eGeneral |
                               vk::DebugUtilsMessageTypeFlagBitsEXT::eValidation |
                               vk::DebugUtilsMessageTypeFlagBitsEXT::ePerformance,
                .pfnUserCallback = &onValidationMessage,
                .pUserData = log_.get()};
            messenger_ = instance_.createDebugUtilsMessengerEXT(messengerInfo);
        }

        auto devices = instance_.enumeratePhysicalDevices();
        if (devices.empty()) {
            throw ComputeError("no Vulkan device found; install a driver, or Mesa lavapipe "
                               "(apt install mesa-vulkan-drivers) to run on the CPU");
        }
        // One rule for --device and INFERSCOPE_DEVICE (DeviceChoice): a bad value is refused
        // with the devices listed, never read as device 0.
        auto deviceList = [&] {
            std::vector<DeviceInfo> described;
            for (std::uint32_t i = 0; i < devices.size(); ++i)
                described.push_back(describe(devices[i], i));
            return deviceListText(described);
        };
        std::optional<std::uint32_t> chosen = options.deviceIndex;
        if (chosen)
            parseDeviceIndex(std::to_string(*chosen), "device", std::uint32_t(devices.size()),
                             deviceList);
        else if (const char* env = std::getenv("INFERSCOPE_DEVICE"); env && *env)
            chosen = parseDeviceIndex(env, "INFERSCOPE_DEVICE", std::uint32_t(devices.size()),
                                      deviceList);
        if (chosen) {
            info_ = describe(devices[*chosen], *chosen);
        } else {
            std::optional<DeviceInfo> best;
            for (std::uint32_t i = 0; i < devices.size(); ++i) {
                auto candidate = describe(devices[i], i);
                if (candidate.apiVersion < VK_API_VERSION_1_2 || !candidate.storage16Bit) continue;
                if (!best || deviceRank(candidate.type) < deviceRank(best->type)) best = candidate;
            }
            info_ = best ? *best : describe(devices[0], 0);
        }
        if (info_.apiVersion < VK_API_VERSION_1_2) {
            throw ComputeError("Vulkan device '" + info_.name + "' supports only Vulkan " +
                               apiVersionString(info_.apiVersion) + "; InferScope needs 1.2");
        }
        if (!info_.storage16Bit) {
            throw ComputeError("Vulkan device '" + info_.name +
                               "' lacks the required feature storageBuffer16BitAccess "
                               "(16-bit storage for f16 weights and KV cache)");
        }
        physicalDevice_ = std::move(devices[info_.index]);
        memoryProperties_ = physicalDevice_.getMemoryProperties();
        for (std::uint32_t i = 0; i < memoryProperties_.memoryTypeCount; ++i) {
            const auto flags = memoryProperties_.memoryTypes[i].propertyFlags;
            if ((flags & vk::MemoryPropertyFlagBits::eDeviceLocal) &&
                (flags & vk::MemoryPropertyFlagBits::eHostVisible) &&
                (flags & vk::MemoryPropertyFlagBits::eHostCoherent)) {
                const auto heap = memoryProperties_.memoryTypes[i].heapIndex;
                // Small ReBAR windows (256 MB) are not "unified": only a whole-memory heap.
                if (memoryProperties_.memoryHeaps[heap].size >= (1ull << 30)) unifiedMemory_ = true;
            }
        }

        const auto families = physicalDevice_.getQueueFamilyProperties();
        std::optional<std::uint32_t> family;
        for (std::uint32_t i = 0; i < families.size(); ++i) {
            if (families[i].queueFlags & vk::QueueFlagBits::eCompute) {
                // A compute-only family is often the dedicated async engine; any will do.
                if (!family || !(families[i].queueFlags & vk::QueueFlagBits::eGraphics)) {
                    if (!family) family = i;
                }
            }
        }
        if (!family) throw ComputeError("Vulkan device '" + info_.name + "' has no compute queue");
        queueFamily_ = *family;

        const float priority = 1.0f;
        const vk::DeviceQueueCreateInfo queueInfo{
            .queueFamilyIndex = queueFamily_, .queueCount = 1, .pQueuePriorities = &priority};
        vk::PhysicalDeviceFeatures2 features2{};
        vk::PhysicalDeviceVulkan11Features features11{.storageBuffer16BitAccess = VK_TRUE};
        vk::PhysicalDeviceVulkan12Features features12{};
        features12.shaderFloat16 = info_.shaderFloat16;
        features12.shaderInt8 = info_.shaderInt8;
        features12.storageBuffer8BitAccess = VK_FALSE;
        features2.pNext = &features11;
        features11.pNext = &features12;
        std::vector<const char*> extensions;
        if (info_.memoryBudget) extensions.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
        const vk::DeviceCreateInfo deviceInfo{.pNext = &features2,
                                              .queueCreateInfoCount = 1,
                                              .pQueueCreateInfos = &queueInfo,
                                              .enabledExtensionCount =
                                                  static_cast<std::uint32_t>(extensions.size()),
                                              .ppEnabledExtensionNames = extensions.data()};
        device_ = physicalDevice_.createDevice(deviceInfo);
        queue_ = device_.getQueue(queueFamily_, 0);
        commandPool_ =
            device_.createCommandPool({.flags = vk::CommandPoolCreateFlagBits::eResetCommandBuffer,
                                       .queueFamilyIndex = queueFamily_});
    } catch (...) {
        rethrowVulkanError("device set-up");
    }
}

std::vector<MemoryHeapInfo> VulkanContext::memoryHeaps() const {
    return describe(physicalDevice_, info_.index).heaps;
}

std::optional<std::uint32_t>
VulkanContext::findMemoryType(std::uint32_t typeBits, vk::MemoryPropertyFlags required,
                              vk::MemoryPropertyFlags preferred) const {
    std::optional<std::uint32_t> fallback;
    for (std::uint32_t i = 0; i < memoryProperties_.memoryTypeCount; ++i) {
        if (!(typeBits & (1u << i))) continue;
        const auto flags = memoryProperties_.memoryTypes[i].propertyFlags;
        if ((flags & required) != required) continue;
        if ((flags & preferred) == preferred) return i;
        if (!fallback) fallback = i;
    }
    return fallback;
}

void VulkanContext::noteAllocation(std::int64_t delta) const {
    const auto now =
        allocated_.fetch_add(static_cast<std::uint64_t>(delta)) + static_cast<std::uint64_t>(delta);
    auto peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
}

} // namespace inferscope::compute
