#include "models/ModelConfig.hpp"

#include "models/ModelError.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace inferscope::models {

namespace {

// Caps far above any real decoder-only model, low enough that products of them (weight
// and cache sizes) cannot overflow 64 bits and a hostile file cannot ask for absurd memory.
constexpr std::uint32_t maxLayers = 1024;
constexpr std::uint32_t maxHidden = 1u << 16;
constexpr std::uint32_t maxHeads = 1024;
constexpr std::uint32_t maxHeadDim = 1024;
constexpr std::uint32_t maxFfn = 1u << 20;
constexpr std::uint32_t maxVocab = 1u << 22;
constexpr std::uint32_t maxContext = 1u << 24;

// Shortest readable form ("1e-05", "nan"), unlike std::to_string's fixed six decimals.
std::string number(float value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
    return text;
}

void requireRange(const std::string& source, const char* field, std::uint64_t value,
                  std::uint64_t maximum) {
    if (value == 0) throw ModelError(source, field, std::nullopt, "must not be zero");
    if (value > maximum)
        throw ModelError(source, field, std::nullopt,
                         std::to_string(value) + " exceeds the limit of " +
                             std::to_string(maximum));
}

} // namespace

void ModelConfig::validate(const std::string& source) const {
    const auto& supported = supportedArchitectures();
    if (std::find(supported.begin(), supported.end(), architecture) == supported.end()) {
        std::string list;
        for (const auto& name : supported) list += (list.empty() ? "" : ", ") + name;
        throw ModelError(source, "architecture", std::nullopt,
                         "unsupported architecture '" + architecture + "' (supported: " + list +
                             ")");
    }
    requireRange(source, "layers", layers, maxLayers);
    requireRange(source, "hiddenSize", hiddenSize, maxHidden);
    requireRange(source, "heads", heads, maxHeads);
    requireRange(source, "kvHeads", kvHeads, maxHeads);
    requireRange(source, "headDim", headDim, maxHeadDim);
    requireRange(source, "ffnSize", ffnSize, maxFfn);
    requireRange(source, "vocabSize", vocabSize, maxVocab);
    requireRange(source, "contextLength", contextLength, maxContext);
    if (kvHeads > heads || heads % kvHeads != 0)
        throw ModelError(source, "kvHeads", std::nullopt,
                         std::to_string(heads) + " query heads are not a multiple of " +
                             std::to_string(kvHeads) + " KV heads");
    if (headDim % 2 != 0)
        throw ModelError(source, "headDim", std::nullopt,
                         "RoPE needs an even head dimension, got " + std::to_string(headDim));
    // Attention width may differ from the hidden size (explicit key_length), but not wildly.
    const std::uint64_t attentionWidth = std::uint64_t{heads} * headDim;
    if (attentionWidth > 4ull * hiddenSize || 4ull * attentionWidth < hiddenSize)
        throw ModelError(source, "headDim", std::nullopt,
                         std::to_string(heads) + " heads x " + std::to_string(headDim) +
                             " is not a sane attention width for hidden size " +
                             std::to_string(hiddenSize));
    if (!std::isfinite(ropeTheta) || ropeTheta <= 0.0f)
        throw ModelError(source, "ropeTheta", std::nullopt,
                         "must be finite and positive, got " + number(ropeTheta));
    if (!std::isfinite(rmsNormEps) || rmsNormEps <= 0.0f || rmsNormEps >= 1.0f)
        throw ModelError(source, "rmsNormEps", std::nullopt,
                         "must be in (0, 1), got " + number(rmsNormEps));
    if (ropeScaling.type != RopeScalingType::None) {
        if (!std::isfinite(ropeScaling.factor) || ropeScaling.factor <= 0.0f ||
            ropeScaling.factor > 1024.0f)
            throw ModelError(source, "ropeScaling.factor", std::nullopt,
                             "must be in (0, 1024], got " + number(ropeScaling.factor));
    }
    if (ropeScaling.type == RopeScalingType::LongRope) {
        if (ropeScaling.frequencyFactors.size() != headDim / 2)
            throw ModelError(source, "ropeScaling.frequencyFactors", std::nullopt,
                             "LongRope needs " + std::to_string(headDim / 2) +
                                 " factors (one per RoPE pair), got " +
                                 std::to_string(ropeScaling.frequencyFactors.size()));
        for (float factor : ropeScaling.frequencyFactors)
            if (!std::isfinite(factor) || factor <= 0.0f)
                throw ModelError(source, "ropeScaling.frequencyFactors", std::nullopt,
                                 "factors must be finite and positive, got " + number(factor));
        if (!std::isfinite(ropeScaling.attentionFactor) || ropeScaling.attentionFactor <= 0.0f ||
            ropeScaling.attentionFactor > 16.0f)
            throw ModelError(source, "ropeScaling.attentionFactor", std::nullopt,
                             "must be in (0, 16], got " + number(ropeScaling.attentionFactor));
        if (contextLength > ropeScaling.originalContext)
            throw ModelError(source, "contextLength", std::nullopt,
                             "LongRope runs its short factors only up to the original context (" +
                                 std::to_string(ropeScaling.originalContext) + "), got " +
                                 std::to_string(contextLength));
    }
    if (ropeScaling.type == RopeScalingType::Llama3) {
        if (!std::isfinite(ropeScaling.lowFreqFactor) ||
            !std::isfinite(ropeScaling.highFreqFactor) || ropeScaling.lowFreqFactor <= 0.0f ||
            ropeScaling.highFreqFactor <= ropeScaling.lowFreqFactor)
            throw ModelError(source, "ropeScaling.highFreqFactor", std::nullopt,
                             "llama3 RoPE scaling needs 0 < low_freq_factor < high_freq_factor");
        requireRange(source, "ropeScaling.originalContext", ropeScaling.originalContext,
                     maxContext);
    }
    if (!layerSpans.empty() && layerSpans.size() != layers)
        throw ModelError(source, "layerSpans", std::nullopt,
                         std::to_string(layerSpans.size()) + " attention spans for " +
                             std::to_string(layers) + " layers");
    if (windowedLayers() > 0) {
        requireRange(source, "slidingWindow", slidingWindow, maxContext);
        if (!std::isfinite(ropeThetaWindow) || ropeThetaWindow <= 0.0f)
            throw ModelError(source, "ropeThetaWindow", std::nullopt,
                             "must be finite and positive, got " + number(ropeThetaWindow));
    }
    for (std::uint32_t layer : noRopeLayers)
        if (layer >= layers)
            throw ModelError(source, "noRopeLayers", std::nullopt,
                             "layer " + std::to_string(layer) + " is beyond the " +
                                 std::to_string(layers) + " layers");
    if (!std::isfinite(embeddingScale) || embeddingScale <= 0.0f || embeddingScale > 1e4f)
        throw ModelError(source, "embeddingScale", std::nullopt,
                         "must be in (0, 1e4], got " + number(embeddingScale));
    if (!std::isfinite(attentionScale) || attentionScale < 0.0f || attentionScale > 1e3f)
        throw ModelError(source, "attentionScale", std::nullopt,
                         "must be in [0, 1e3] (0: 1/sqrt(head dim)), got " +
                             number(attentionScale));
    if (!std::isfinite(normWeightOffset) || std::fabs(normWeightOffset) > 1.0f)
        throw ModelError(source, "normWeightOffset", std::nullopt,
                         "must be 0 or 1, got " + number(normWeightOffset));
}

bool ModelConfig::usesRope(std::uint32_t layer) const {
    return std::find(noRopeLayers.begin(), noRopeLayers.end(), layer) == noRopeLayers.end();
}

float ModelConfig::attentionScaleValue() const {
    float scale =
        attentionScale > 0.0f ? attentionScale : 1.0f / std::sqrt(static_cast<float>(headDim));
    // LongRope multiplies cos and sin of both Q and K by the attention factor: q.k grows by
    // its square, which is the same as scaling the scores.
    if (ropeScaling.type == RopeScalingType::LongRope)
        scale *= ropeScaling.attentionFactor * ropeScaling.attentionFactor;
    return scale;
}

std::uint32_t ModelConfig::windowedLayers() const {
    return static_cast<std::uint32_t>(
        std::count(layerSpans.begin(), layerSpans.end(), AttentionSpan::Window));
}

std::uint64_t ModelConfig::kvCacheBytes(std::uint64_t tokens, std::uint32_t bytesPerElement) const {
    const std::uint64_t perLayer = kvBytesPerTokenPerLayer(bytesPerElement);
    const std::uint64_t windowTokens = std::min<std::uint64_t>(tokens, slidingWindow);
    return perLayer * (std::uint64_t{globalLayers()} * tokens +
                       std::uint64_t{windowedLayers()} * windowTokens);
}

const std::vector<std::string>& supportedArchitectures() {
    static const std::vector<std::string> names{"llama",  "mistral", "qwen2",  "qwen3",
                                                "gemma3", "phi3",    "smollm3"};
    return names;
}

} // namespace inferscope::models
