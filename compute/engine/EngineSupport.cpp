#include "compute/engine/EngineSupport.hpp"

#include "compute/vulkan/VulkanContext.hpp"

namespace inferscope::compute {

std::string engineUnsupportedTraits(const models::ModelConfig& config) {
    std::string missing;
    const auto add = [&](bool lacking, const char* what) {
        if (lacking) missing += (missing.empty() ? "" : ", ") + std::string(what);
    };
    // Everything ModelConfig describes runs (qk_norm_rope, add_norm, GELU and window
    // specializations, per-layer RoPE tables, the window pool); kept as the one place a
    // future trait is refused until the kernels compute it.
    (void)add;
    (void)config;
    return missing;
}

void requireEngineSupport(const models::ModelConfig& config) {
    const std::string missing = engineUnsupportedTraits(config);
    if (!missing.empty())
        throw ComputeError("the Vulkan engine does not run " + config.architecture +
                           " models yet: it lacks " + missing + " (the CPU reference runs them)");
}

} // namespace inferscope::compute
