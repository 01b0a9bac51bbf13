#include "models/synthetic/SyntheticShapes.hpp"

namespace inferscope::models {

namespace {

// The tiny fixtures: a few layers of width 64 (whole q8_0/q4 blocks), each with what sets its
// architecture apart, small enough that llama.cpp and the suite run them in milliseconds.
SyntheticModelSpec tiny(const std::string& architecture, TensorType type) {
    SyntheticModelSpec spec;
    spec.architecture = architecture;
    spec.layers = 2;
    spec.hiddenSize = 64;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.headDim = 16;
    spec.ffnSize = 96;
    spec.vocabSize = 300;
    spec.contextLength = 512;
    spec.tiedEmbeddings = true;
    spec.outlierDims = {5};
    spec.outlierScale = 8.0f;
    spec.seed = 45;
    spec.weightType = type;
    if (architecture == "qwen3") {
        // An explicit head dimension: 4 x 32 = 128 is twice the hidden size, as in Qwen3.
        spec.headDim = 32;
        spec.ropeTheta = 1000000.0f;
        spec.rmsNormEps = 1e-6f;
    } else if (architecture == "gemma3") {
        // Four layers, windowed and global in turn, a window of 4 positions, one KV head.
        spec.layers = 4;
        spec.kvHeads = 1;
        spec.headDim = 32;
        spec.ffnSize = 128;
        spec.slidingWindow = 4;
        spec.slidingWindowPattern = 2;
        spec.ropeTheta = 1000000.0f;
        spec.ropeThetaWindow = 10000.0f;
        spec.rmsNormEps = 1e-6f;
    } else if (architecture == "phi3") {
        // Multi-head attention (heads x head dim = hidden) and a separate output head.
        spec.kvHeads = 4;
        spec.tiedEmbeddings = false;
    } else if (architecture == "smollm3") {
        // Layer 3 is a NoPE layer.
        spec.layers = 4;
        spec.ropeTheta = 5000000.0f;
    }
    return spec;
}

} // namespace

const std::vector<SyntheticShape>& syntheticShapes() {
    static const std::vector<SyntheticShape> shapes{
        {"qwen2.5-0.5b", "Qwen2.5-0.5B's shape (the chapter's model), random weights"},
        {"qwen3-0.6b", "Qwen3-0.6B's shape (Q/K norm, head dim 128), random weights"},
        {"gemma-3-270m", "Gemma-3-270M's shape (window 512 on 5 of 6 layers), random weights"},
        {"tiny-qwen3", "2-layer qwen3 fixture (llama.cpp logits in tests/data)"},
        {"tiny-gemma3", "4-layer gemma3 fixture, window 4 on every other layer"},
        {"tiny-phi3", "2-layer phi3 fixture (fused Q|K|V and gate|up)"},
        {"tiny-smollm3", "4-layer smollm3 fixture (layer 3 without RoPE)"},
    };
    return shapes;
}

std::optional<SyntheticModelSpec> syntheticShape(const std::string& name, TensorType type) {
    if (name == "qwen2.5-0.5b") return qwen25HalfBillionShape(type);
    if (name == "qwen3-0.6b") return qwen3SixHundredMillionShape(type);
    if (name == "gemma-3-270m") return gemma3TwoHundredSeventyMillionShape(type);
    for (const char* architecture : {"qwen3", "gemma3", "phi3", "smollm3"})
        if (name == std::string("tiny-") + architecture) return tiny(architecture, type);
    return std::nullopt;
}

SyntheticModelSpec qwen3SixHundredMillionShape(TensorType type) {
    SyntheticModelSpec spec;
    spec.architecture = "qwen3";
    spec.layers = 28;
    spec.hiddenSize = 1024;
    spec.heads = 16;
    spec.kvHeads = 8;
    spec.headDim = 128;
    spec.ffnSize = 3072;
    spec.vocabSize = 151936;
    spec.tokenizerTokens = 4096;
    spec.contextLength = 40960;
    spec.ropeTheta = 1000000.0f;
    spec.rmsNormEps = 1e-6f;
    spec.tiedEmbeddings = true;
    spec.outlierDims = {17, 443};
    spec.weightType = type;
    return spec;
}

SyntheticModelSpec gemma3TwoHundredSeventyMillionShape(TensorType type) {
    SyntheticModelSpec spec;
    spec.architecture = "gemma3";
    spec.layers = 18;
    spec.hiddenSize = 640;
    spec.heads = 4;
    spec.kvHeads = 1;
    spec.headDim = 256;
    spec.ffnSize = 2048;
    spec.vocabSize = 262144;
    spec.tokenizerTokens = 4096;
    spec.contextLength = 32768;
    spec.ropeTheta = 1000000.0f;
    spec.ropeThetaWindow = 10000.0f;
    spec.slidingWindow = 512;
    spec.slidingWindowPattern = 6;
    spec.rmsNormEps = 1e-6f;
    spec.tiedEmbeddings = true;
    spec.outlierDims = {17, 443};
    spec.weightType = type;
    return spec;
}

} // namespace inferscope::models
