#include "compute/vulkan/DeviceChoice.hpp"

#include <cstdlib>

namespace inferscope::compute {

std::string deviceListText(const std::vector<DeviceInfo>& devices) {
    std::string text;
    for (const auto& device : devices) {
        if (!text.empty()) text += "; ";
        text += std::to_string(device.index) + " " + device.name + " (" + device.type + ")";
    }
    return text.empty() ? "none" : text;
}

std::uint32_t parseDeviceIndex(std::string_view text, std::string_view source,
                               std::uint32_t deviceCount,
                               const std::function<std::string()>& deviceList) {
    auto refuse = [&](const std::string& why) -> std::uint32_t {
        throw DeviceChoiceError(std::string(source) + ": " + why + " (devices: " + deviceList() +
                                "; see `inferscope-cli devices`)");
    };
    const bool digits = !text.empty() && text.size() <= 9 &&
                        text.find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits) return refuse("'" + std::string(text) + "' is not a device number");
    const auto index = std::uint32_t(std::stoul(std::string(text)));
    if (index >= deviceCount)
        return refuse("there is no device " + std::to_string(index) + ", this machine has " +
                      std::to_string(deviceCount));
    return index;
}

std::optional<std::uint32_t> requestedDevice(const std::optional<std::string>& option,
                                             std::string_view optionName) {
    std::string text;
    std::string_view source;
    if (option) {
        text = *option;
        source = optionName;
    } else if (const char* env = std::getenv("INFERSCOPE_DEVICE"); env && *env) {
        text = env;
        source = "INFERSCOPE_DEVICE";
    } else {
        return std::nullopt;
    }
    const auto devices = listDevices();
    return parseDeviceIndex(text, source, std::uint32_t(devices.size()),
                            [&] { return deviceListText(devices); });
}

} // namespace inferscope::compute
