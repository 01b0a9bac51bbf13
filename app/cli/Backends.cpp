#include "app/cli/Backends.hpp"

namespace inferscope::cli {

void addBackendOptions(OptionSpec& spec) {
    spec.valued.insert({"--backend", "--device", "--format"});
    spec.flags.insert("--no-cache");
}

BackendArguments backendArguments(const Arguments& a) {
    BackendArguments result;
    const std::string backend = a.valueOr("--backend", "vulkan");
    if (backend != "vulkan" && backend != "cpu")
        throw UsageError("unknown backend '" + backend + "' (choose vulkan or cpu)");
    if (backend == "cpu" && (a.value("--device") || a.value("--format")))
        throw UsageError("--device and --format apply to the vulkan backend only");
    result.choice.kind =
        backend == "cpu" ? compute::BackendChoice::Kind::Cpu : compute::BackendChoice::Kind::Vulkan;
    result.useCache = !a.flag("--no-cache");
    if (a.value("--device"))
        result.choice.deviceIndex = static_cast<std::uint32_t>(a.integer("--device", 0, 0, 64));
    if (auto format = a.value("--format")) {
        if (!compute::weightFormatFromName(*format))
            throw UsageError("unknown weight format '" + *format +
                             "' (known: " + compute::weightFormatNames() + ")");
        result.choice.weightFormat = *format;
    }
    return result;
}

compute::EngineOptions BackendArguments::engineOptions() const {
    compute::EngineOptions options;
    options.device.deviceIndex = choice.deviceIndex;
    options.cached = useCache;
    if (!choice.weightFormat.empty())
        options.weightFormat = *compute::weightFormatFromName(choice.weightFormat);
    return options;
}

} // namespace inferscope::cli
