#pragma once
// What sets the newer architectures apart, read from config.json into ModelConfig: Q/K norm
// (qwen3, gemma3), gemma3's post-norms, (1 + w) norms, GeGLU, embedding and attention scales
// and sliding-window layers, phi3's LongRope, smollm3's NoPE layers.
#include "models/ModelConfig.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace inferscope::models {

// Called by parseHfConfig once the common fields (and RoPE) are read.
void readArchitectureTraits(const nlohmann::json& config, const std::string& source,
                            ModelConfig& result);

} // namespace inferscope::models
