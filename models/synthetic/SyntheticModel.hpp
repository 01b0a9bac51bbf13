#pragma once
// Deterministic random models of any shape, with planted outlier dimensions in the
// residual stream, written as real GGUF or safetensors files with a working byte-level
// BPE tokenizer. Every layer's tests use them (DESIGN.md, correctness tier 2).
#include "models/ModelConfig.hpp"
#include "models/formats/TensorType.hpp"
#include "models/quant/LlamaQuantMix.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace inferscope::models {

struct SyntheticModelSpec {
    // "llama" (adjacent RoPE in GGUF), "qwen2" (q/k/v biases), "qwen3" (Q/K norm), "gemma3"
    // (Q/K norm, post-norms, GeGLU, scaled embedding, sliding-window layers), "phi3" (fused
    // Q|K|V and gate|up in the files) or "smollm3" (llama with NoPE every fourth layer).
    std::string architecture = "llama";
    std::uint32_t layers = 2;
    std::uint32_t hiddenSize = 64;
    std::uint32_t heads = 4;
    std::uint32_t kvHeads = 2;
    std::uint32_t headDim = 16;
    std::uint32_t ffnSize = 96;
    std::uint32_t vocabSize = 300; // >= 256 + special tokens; the rest are BPE merges
    // Tokens the tokenizer has (0: vocabSize). Fewer pads the embedding rows past them, as
    // Qwen2.5 holds 151,665 tokens in 151,936 rows: GGUF lists the rest as unused "[PAD<id>]"
    // tokens (as conversion does), tokenizer.json leaves them out (the loader pads).
    std::uint32_t tokenizerTokens = 0;
    std::uint32_t contextLength = 512;
    float ropeTheta = 10000.0f;
    float rmsNormEps = 1e-5f;
    // gemma3: the local layers' window (0: every layer global), every slidingWindowPattern-th
    // layer global (the others windowed), and the local layers' RoPE base.
    std::uint32_t slidingWindow = 0;
    std::uint32_t slidingWindowPattern = 6;
    float ropeThetaWindow = 10000.0f;
    bool tiedEmbeddings = true;
    bool qkvBias = false;
    std::uint64_t seed = 1;
    // Residual-stream dimensions made large in every layer (through the embedding and the
    // norm weights), and by how much.
    std::vector<std::uint32_t> outlierDims;
    float outlierScale = 20.0f;
    TensorType weightType = TensorType::F32; // F32, F16, BF16 (GGUF: any block type too)
    // GGUF: each matrix in the type llama.cpp's quantizer gives it under this preset
    // (models/quant/LlamaQuantMix.hpp) instead of weightType.
    std::optional<QuantPreset> typeMix;
};

// The configuration the GGUF file describes (the safetensors folder's differs only in RoPE
// pairing, split-half, and for gemma3 in normWeightOffset, 1).
ModelConfig syntheticConfig(const SyntheticModelSpec& spec);
// The chapter's model in shape (Qwen2.5-0.5B: 24 layers, hidden 896, 14 query and 2 KV
// heads of 64, FFN 4,864, 151,936 embedding rows, tied, Q/K/V biases, RoPE base 1e6) with
// random weights of `type` and a 4,096-token BPE tokenizer padded to the full vocabulary.
SyntheticModelSpec qwen25HalfBillionShape(TensorType type);
// Writes tensor by tensor: memory stays at about the largest tensor (the embedding).
void writeSyntheticGguf(const SyntheticModelSpec& spec, const std::filesystem::path& file);
// Writes config.json, tokenizer.json and model.safetensors into folder (created), as
// transformers saves the architecture: Q/K rows in HF order (split-half RoPE), gemma3's norms
// as w where the GGUF holds 1 + w, phi3's Q|K|V and gate|up fused.
void writeSyntheticSafetensors(const SyntheticModelSpec& spec, const std::filesystem::path& folder);

} // namespace inferscope::models
