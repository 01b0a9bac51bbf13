#include "app/cli/Backends.hpp"

#include "compute/vulkan/DeviceChoice.hpp"

#include <cmath>
#include <utility>

namespace inferscope::cli {

void addBackendOptions(OptionSpec& spec) {
    spec.valued.insert({"--backend", "--device", "--format"});
    spec.flags.insert({"--no-cache", "--int8-activations"});
}

std::optional<std::uint32_t> deviceArgument(const Arguments& a) {
    try {
        return compute::requestedDevice(a.value("--device"));
    } catch (const compute::DeviceChoiceError& e) {
        throw UsageError(e.what());
    }
}

BackendArguments backendArguments(const Arguments& a) {
    BackendArguments result;
    const std::string backend = a.valueOr("--backend", "vulkan");
    if (backend != "vulkan" && backend != "cpu")
        throw UsageError("unknown backend '" + backend + "' (choose vulkan or cpu)");
    if (backend == "cpu" &&
        (a.value("--device") || a.value("--format") || a.flag("--int8-activations")))
        throw UsageError("--device, --format and --int8-activations apply to the vulkan "
                         "backend only");
    result.choice.int8Activations = a.flag("--int8-activations");
    result.choice.kind =
        backend == "cpu" ? compute::BackendChoice::Kind::Cpu : compute::BackendChoice::Kind::Vulkan;
    result.useCache = !a.flag("--no-cache");
    if (result.vulkan())
        if (const auto device = deviceArgument(a)) result.choice.deviceIndex = *device;
    if (auto format = a.value("--format")) {
        if (!compute::weightFormatFromName(*format))
            throw UsageError("unknown weight format '" + *format +
                             "' (known: " + compute::weightFormatNames() + ")");
        result.choice.weightFormat = *format;
    } else if (result.vulkan()) {
        result.choice.weightFormat = compute::kDefaultWeightFormat; // as the window starts
    }
    return result;
}

void addMemoryOptions(OptionSpec& spec) {
    spec.valued.insert({"--device-memory", "--host-memory"});
}

std::uint64_t parseByteSize(const std::string& text, const char* option) {
    static const std::pair<const char*, double> units[] = {{"TiB", 1099511627776.0},
                                                           {"GiB", 1073741824.0},
                                                           {"MiB", 1048576.0},
                                                           {"KiB", 1024.0},
                                                           {"TB", 1e12},
                                                           {"GB", 1e9},
                                                           {"MB", 1e6},
                                                           {"KB", 1e3},
                                                           {"B", 1.0}};
    std::string number = text;
    double scale = 1.0;
    for (const auto& [unit, factor] : units) {
        const std::string suffix = unit;
        if (number.size() > suffix.size() &&
            number.compare(number.size() - suffix.size(), suffix.size(), suffix) == 0) {
            number.resize(number.size() - suffix.size());
            scale = factor;
            break;
        }
    }
    double value = 0;
    std::size_t used = 0;
    try {
        value = std::stod(number, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const double bytes = value * scale;
    if (number.empty() || used != number.size() || !std::isfinite(bytes) || bytes < 0 ||
        bytes > 1.8e19)
        throw UsageError(std::string(option) + ": '" + text +
                         "' is not a size (bytes, or e.g. 512MiB, 1.5GiB)");
    return std::uint64_t(bytes);
}

compute::MemoryAvailability memoryAvailability(const Arguments& a) {
    compute::MemoryAvailability available;
    if (auto text = a.value("--device-memory"))
        available.deviceBytes = parseByteSize(*text, "--device-memory");
    if (auto text = a.value("--host-memory"))
        available.hostBytes = parseByteSize(*text, "--host-memory");
    return available;
}

compute::EngineOptions BackendArguments::engineOptions() const {
    compute::EngineOptions options = compute::engineOptionsFor(choice);
    options.cached = useCache;
    return options;
}

} // namespace inferscope::cli
