#pragma once
// One rule for choosing a Vulkan device, whoever asks: the CLI's --device, INFERSCOPE_DEVICE,
// the window's --backend vulkan:N. A device number is decimal digits naming an existing
// device; anything else ("99" on a one-device machine, "abc", "-1", "") is refused with the
// list of devices, never read as device 0.
#include "compute/vulkan/VulkanContext.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute {

class DeviceChoiceError : public ComputeError {
public:
    using ComputeError::ComputeError;
};

// "0 llvmpipe (LLVM 15.0.6, 256 bits) (cpu)", one device per entry, "; " between.
std::string deviceListText(const std::vector<DeviceInfo>& devices);

// `text` as `source` gave it ("--device", "INFERSCOPE_DEVICE"), checked against deviceCount
// devices; deviceList (called only to word a refusal) lists them.
std::uint32_t parseDeviceIndex(std::string_view text, std::string_view source,
                               std::uint32_t deviceCount,
                               const std::function<std::string()>& deviceList);

// The device asked for: `option` (the value of --device) when given, else INFERSCOPE_DEVICE
// when set and not empty, each checked against listDevices(); nullopt when neither asks.
std::optional<std::uint32_t> requestedDevice(const std::optional<std::string>& option,
                                             std::string_view optionName = "--device");

} // namespace inferscope::compute
