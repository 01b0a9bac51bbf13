// config.json's fields for what sets qwen3, gemma3, phi3 and smollm3 apart (ModelConfig).
#include "models/formats/HfArchitectureTraits.hpp"

#include "models/ModelError.hpp"
#include "models/formats/HfJsonFields.hpp"

#include <algorithm>
#include <cmath>

namespace inferscope::models {

using namespace hfjson;

// What sets the newer architectures apart, in transformers' config fields.
void readArchitectureTraits(const Json& config, const std::string& source, ModelConfig& result) {
    const std::string& architecture = result.architecture;
    const bool gemma = architecture == "gemma3";
    // The activation: silu everywhere but gemma3 (gelu_pytorch_tanh, in hidden_activation).
    const char* activationKey = gemma ? "hidden_activation" : "hidden_act";
    if (const Json* activation = findField(config, activationKey)) {
        const std::string name = activation->is_string() ? activation->get<std::string>() : "";
        const bool supported = gemma ? name == "gelu_pytorch_tanh" : name == "silu";
        if (!supported)
            throw ModelError(
                source, activationKey, std::nullopt,
                std::string("only ") + (gemma ? "gelu_pytorch_tanh (GeGLU)" : "silu (SwiGLU)") +
                    " is supported for " + architecture + ", got " + activation->dump());
    }
    if (architecture == "qwen3") result.qkNorm = true;
    if (architecture == "smollm3") {
        // no_rope_layers: 1 where a layer uses RoPE, 0 where it does not (NoPE); absent, every
        // no_rope_layer_interval-th layer (default 4) skips it, as transformers computes it.
        if (const Json* flags = findField(config, "no_rope_layers")) {
            if (!flags->is_array() || flags->size() != result.layers)
                throw ModelError(source, "no_rope_layers", std::nullopt,
                                 "must be an array of one 0/1 per layer (" +
                                     std::to_string(result.layers) + ")");
            for (std::uint32_t layer = 0; layer < result.layers; ++layer) {
                const Json& flag = (*flags)[layer];
                if (!flag.is_number_integer() || (flag != 0 && flag != 1))
                    throw ModelError(source, "no_rope_layers", std::nullopt,
                                     "entries must be 0 or 1, got " + flag.dump());
                if (flag == 0) result.noRopeLayers.push_back(layer);
            }
        } else {
            const std::uint32_t interval =
                optionalUnsigned(config, source, "no_rope_layer_interval").value_or(4);
            if (interval == 0)
                throw ModelError(source, "no_rope_layer_interval", std::nullopt,
                                 "must not be zero");
            for (std::uint32_t layer = interval - 1; layer < result.layers; layer += interval)
                result.noRopeLayers.push_back(layer);
        }
    }
    if (architecture == "phi3" && result.ropeScaling.type == RopeScalingType::LongRope) {
        RopeScaling& scaling = result.ropeScaling;
        if (scaling.originalContext == 0) {
            const auto original =
                optionalUnsigned(config, source, "original_max_position_embeddings");
            if (!original)
                throw ModelError(source, "original_max_position_embeddings", std::nullopt,
                                 "needed by LongRope");
            scaling.originalContext = *original;
        }
        if (scaling.originalContext == 0)
            throw ModelError(source, "original_max_position_embeddings", std::nullopt,
                             "must not be zero");
        if (scaling.attentionFactor == 0.0f) {
            // As transformers and llama.cpp's converter: from the context extension.
            const double factor = double(result.contextLength) / double(scaling.originalContext);
            scaling.attentionFactor =
                factor > 1.0 ? float(std::sqrt(1.0 + std::log(factor) /
                                                         std::log(double(scaling.originalContext))))
                             : 1.0f;
        }
        result.contextLength = std::min(result.contextLength, scaling.originalContext);
    }
    // Phi-3's sliding_window is left out, as llama.cpp leaves it out (its phi3 runs every
    // layer global); mistral's is handled by parseHfConfig.
    if (!gemma) return;

    if (optionalBool(config, source, "use_bidirectional_attention").value_or(false))
        throw ModelError(source, "use_bidirectional_attention", std::nullopt,
                         "bidirectional attention (embedding models) is not supported");
    for (const char* softcap : {"final_logit_softcapping", "attn_logit_softcapping"})
        if (auto value = optionalNumber(config, source, softcap); value && *value != 0.0)
            throw ModelError(source, softcap, std::nullopt,
                             "logit soft-capping is not supported (Gemma 3 has none)");
    result.qkNorm = true;
    result.postNorms = true;
    result.activation = FfnActivation::GeluTanh;
    result.embeddingScale = std::sqrt(static_cast<float>(result.hiddenSize));
    result.normWeightOffset = 1.0f; // Gemma3RMSNorm computes x * (1 + w)
    // Gemma3TextConfig's defaults: tied embeddings, query_pre_attn_scalar 256.
    result.tiedEmbeddings = optionalBool(config, source, "tie_word_embeddings").value_or(true);
    const double queryScalar =
        optionalNumber(config, source, "query_pre_attn_scalar").value_or(256.0);
    if (!(queryScalar > 0.0))
        throw ModelError(source, "query_pre_attn_scalar", std::nullopt, "must be positive");
    result.attentionScale = static_cast<float>(1.0 / std::sqrt(queryScalar));
    const Json* ropeParameters = findField(config, "rope_parameters");
    if (!ropeParameters || !ropeParameters->is_object() ||
        !findField(*ropeParameters, "sliding_attention"))
        result.ropeThetaWindow = static_cast<float>(
            optionalNumber(config, source, "rope_local_base_freq").value_or(10000.0));
    const auto window = optionalUnsigned(config, source, "sliding_window");
    if (!window || *window == 0) return;
    result.slidingWindow = *window;
    result.layerSpans.assign(result.layers, AttentionSpan::Global);
    if (const Json* types = findField(config, "layer_types")) {
        if (!types->is_array() || types->size() != result.layers)
            throw ModelError(source, "layer_types", std::nullopt,
                             "must list one attention type per layer (" +
                                 std::to_string(result.layers) + ")");
        for (std::uint32_t layer = 0; layer < result.layers; ++layer) {
            const Json& type = (*types)[layer];
            if (type == "sliding_attention")
                result.layerSpans[layer] = AttentionSpan::Window;
            else if (type != "full_attention")
                throw ModelError(source, "layer_types", std::nullopt,
                                 "entries must be sliding_attention or full_attention, got " +
                                     type.dump());
        }
        return;
    }
    // Older configs: every sliding_window_pattern-th layer is global.
    auto period = optionalUnsigned(config, source, "sliding_window_pattern");
    if (!period) period = optionalUnsigned(config, source, "_sliding_window_pattern");
    const std::uint32_t every = period.value_or(6);
    for (std::uint32_t layer = 0; layer < result.layers; ++layer)
        if (every == 0 || (layer + 1) % every != 0)
            result.layerSpans[layer] = AttentionSpan::Window;
}

} // namespace inferscope::models
