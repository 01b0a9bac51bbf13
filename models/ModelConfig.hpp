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

enum class RopeScalingType { None, Linear, Llama3 };

struct RopeScaling {
    RopeScalingType type = RopeScalingType::None;
    float factor = 1.0f;
    float lowFreqFactor = 1.0f;  // llama3
    float highFreqFactor = 4.0f; // llama3
    std::uint32_t originalContext = 8192;
};

struct ModelConfig {
    std::string architecture; // "llama", "qwen2", "mistral"
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

    std::uint32_t queryGroupSize() const { return kvHeads ? heads / kvHeads : 0; }
    // KV cache bytes per token: 2 (K and V) x layers x kv heads x head dim x bytes per element.
    std::uint64_t kvBytesPerToken(std::uint32_t bytesPerElement = 2) const {
        return 2ull * layers * kvHeads * headDim * bytesPerElement;
    }
    // Checks internal consistency (heads divisible by kv heads, sizes non-zero and sane);
    // throws ModelError naming the offending field.
    void validate(const std::string& source) const;
};

// Architectures this build can run; used in the "unsupported architecture" error.
const std::vector<std::string>& supportedArchitectures();

} // namespace inferscope::models
