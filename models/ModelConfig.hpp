#pragma once
// Architecture hyper-parameters of a decoder-only transformer, read from GGUF metadata or
// an HF config.json. Everything the reference and GPU transformers need to know.
#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::models {

// How RoPE pairs the dimensions of a head it rotates together.
enum class RopePairing {
    Adjacent,  // (0,1), (2,3), ...: GGUF llama files (their Q/K rows were permuted for this)
    SplitHalf, // (i, i + d/2): HF safetensors checkpoints and GGUF qwen2 ("neox" style)
};

// LongRope (Phi-3.5): per-pair frequency divisors and a magnitude factor on cos and sin.
// This program runs the short factors, for contexts up to originalContext, as llama.cpp does
// for such contexts; ModelConfig::contextLength is capped there so none runs longer.
enum class RopeScalingType { None, Linear, Llama3, LongRope };

struct RopeScaling {
    RopeScalingType type = RopeScalingType::None;
    float factor = 1.0f;
    float lowFreqFactor = 1.0f;  // llama3
    float highFreqFactor = 4.0f; // llama3
    std::uint32_t originalContext = 8192;
    std::vector<float> frequencyFactors; // LongRope's short factors, headDim / 2 of them
    float attentionFactor = 1.0f;        // LongRope: cos and sin are multiplied by this
};

// The activation of the gated feed-forward block: SwiGLU (llama, qwen, phi3) or GeGLU with
// GELU's tanh approximation (gemma3: gelu_pytorch_tanh).
enum class FfnActivation { Silu, GeluTanh };

// Which positions a layer's attention sees: all earlier ones (global), or only the last
// slidingWindow positions, its own included (gemma3's local layers).
enum class AttentionSpan : std::uint8_t { Global, Window };

struct ModelConfig {
    std::string architecture; // "llama", "qwen2", "mistral", "qwen3", "gemma3", "phi3", "smollm3"
    std::string name;         // general.name or the folder name
    std::uint32_t layers = 0;
    std::uint32_t hiddenSize = 0;
    std::uint32_t heads = 0;
    std::uint32_t kvHeads = 0;
    std::uint32_t headDim = 0;
    std::uint32_t ffnSize = 0;
    std::uint32_t vocabSize = 0;
    std::uint32_t contextLength = 0;
    float ropeTheta = 10000.0f;
    RopeScaling ropeScaling;
    RopePairing ropePairing = RopePairing::Adjacent;
    float rmsNormEps = 1e-5f;
    bool tiedEmbeddings = false;
    bool qkvBias = false;

    // --- What newer architectures add (defaults: the llama family) ---
    // Per-head RMSNorm of Q and K before RoPE (qwen3, gemma3): blk.N.attn_q_norm.weight and
    // blk.N.attn_k_norm.weight, headDim values each, shared by all heads.
    bool qkNorm = false;
    // RMSNorm of the attention and FFN outputs before they join the residual stream
    // (gemma3): blk.N.post_attention_norm.weight, blk.N.post_ffw_norm.weight.
    bool postNorms = false;
    // Added to every RMSNorm weight as it is read: gemma's HF checkpoints store w and compute
    // x * (1 + w); llama.cpp's converter stores 1 + w in GGUF files (then 0 here).
    float normWeightOffset = 0.0f;
    FfnActivation activation = FfnActivation::Silu;
    float embeddingScale = 1.0f; // the embedding row is multiplied by it (gemma3: sqrt(hidden))
    // Multiplies q.k before the softmax; 0 means 1 / sqrt(headDim). Use attentionScaleValue().
    float attentionScale = 0.0f;
    // Sliding-window attention: one span per layer (empty: every layer global) and the
    // window; windowed layers rotate with their own RoPE base, without scaling.
    std::vector<AttentionSpan> layerSpans;
    std::uint32_t slidingWindow = 0;
    float ropeThetaWindow = 10000.0f;
    // Layers that apply no RoPE at all (smollm3's NoPE layers: every fourth).
    std::vector<std::uint32_t> noRopeLayers;

    std::uint32_t queryGroupSize() const { return kvHeads ? heads / kvHeads : 0; }
    bool windowed(std::uint32_t layer) const {
        return layer < layerSpans.size() && layerSpans[layer] == AttentionSpan::Window;
    }
    bool usesRope(std::uint32_t layer) const;
    // The RoPE base and scaling a layer rotates with.
    float ropeThetaOf(std::uint32_t layer) const {
        return windowed(layer) ? ropeThetaWindow : ropeTheta;
    }
    RopeScaling ropeScalingOf(std::uint32_t layer) const {
        return windowed(layer) ? RopeScaling{} : ropeScaling;
    }
    float attentionScaleValue() const;
    std::uint32_t windowedLayers() const;
    std::uint32_t globalLayers() const { return layers - windowedLayers(); }
    // KV cache bytes per token while a sequence is within every window: 2 (K and V) x layers
    // x kv heads x head dim x bytes per element (the chapter's formula).
    std::uint64_t kvBytesPerToken(std::uint32_t bytesPerElement = 2) const {
        return 2ull * layers * kvHeads * headDim * bytesPerElement;
    }
    // The same for one layer.
    std::uint64_t kvBytesPerTokenPerLayer(std::uint32_t bytesPerElement = 2) const {
        return 2ull * kvHeads * headDim * bytesPerElement;
    }
    // KV cache bytes of one sequence of `tokens` positions: global layers keep every
    // position, windowed layers only the last slidingWindow.
    std::uint64_t kvCacheBytes(std::uint64_t tokens, std::uint32_t bytesPerElement = 2) const;
    // Checks internal consistency (heads divisible by kv heads, sizes non-zero and sane);
    // throws ModelError naming the offending field.
    void validate(const std::string& source) const;
};

// Architectures this build can run; used in the "unsupported architecture" error.
const std::vector<std::string>& supportedArchitectures();

} // namespace inferscope::models
