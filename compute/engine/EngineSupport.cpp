#include "compute/engine/EngineSupport.hpp"

#include "compute/vulkan/VulkanContext.hpp"

namespace inferscope::compute {

std::string engineUnsupportedTraits(const models::ModelConfig& config) {
    std::string missing;
    const auto add = [&](bool lacking, const char* what) {
        if (lacking) missing += (missing.empty() ? "" : ", ") + std::string(what);
    };
    add(config.qkNorm, "Q/K norm");
    add(config.postNorms, "post-attention and post-FFN norms");
    add(config.normWeightOffset != 0.0f, "(1 + w) norm weights");
    add(config.activation != models::FfnActivation::Silu, "GeGLU feed-forward");
    add(config.embeddingScale != 1.0f, "a scaled embedding");
    add(config.windowedLayers() > 0, "sliding-window attention");
    add(!config.noRopeLayers.empty(), "layers without RoPE");
    add(config.attentionScale != 0.0f ||
            config.ropeScaling.type == models::RopeScalingType::LongRope,
        "LongRope / a custom attention scale");
    return missing;
}

void requireEngineSupport(const models::ModelConfig& config) {
    const std::string missing = engineUnsupportedTraits(config);
    if (!missing.empty())
        throw ComputeError("the Vulkan engine does not run " + config.architecture +
                           " models yet: it lacks " + missing +
                           " (the CPU reference runs them)");
}

} // namespace inferscope::compute
