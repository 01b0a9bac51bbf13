#include "app/cli/Backends.hpp"

#include "compute/CpuBackend.hpp"
#include "compute/VulkanBackend.hpp"

namespace inferscope::cli {

void addBackendOptions(OptionSpec& spec) {
    spec.valued.insert({"--backend", "--device", "--format"});
    spec.flags.insert("--no-cache");
}

BackendChoice backendChoice(const Arguments& a) {
    BackendChoice choice;
    choice.backend = a.valueOr("--backend", "vulkan");
    if (choice.backend != "vulkan" && choice.backend != "cpu")
        throw UsageError("unknown backend '" + choice.backend + "' (choose vulkan or cpu)");
    choice.useCache = !a.flag("--no-cache");
    choice.engine.cached = choice.useCache;
    if (a.value("--device"))
        choice.engine.device.deviceIndex = static_cast<std::uint32_t>(a.integer("--device", 0, 0, 64));
    if (auto format = a.value("--format")) {
        auto parsed = compute::weightFormatFromName(*format);
        if (!parsed)
            throw UsageError("unknown weight format '" + *format +
                             "' (known: " + compute::weightFormatNames() + ")");
        choice.engine.weightFormat = *parsed;
    }
    if (choice.backend == "cpu" && (a.value("--device") || a.value("--format")))
        throw UsageError("--device and --format apply to the vulkan backend only");
    return choice;
}

std::unique_ptr<compute::DecoderBackend> makeBackend(const models::LoadedModel& model,
                                                     const BackendChoice& choice) {
    if (choice.backend == "cpu") {
        auto reference = std::make_shared<const models::ReferenceTransformer>(
            model.config, models::dequantizeAll(model.weights));
        return std::make_unique<compute::CpuBackend>(reference, choice.useCache);
    }
    auto engine = std::make_shared<compute::Engine>(model, choice.engine);
    return std::make_unique<compute::VulkanBackend>(engine);
}

} // namespace inferscope::cli
