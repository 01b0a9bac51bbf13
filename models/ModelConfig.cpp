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
    if (ropeScaling.type == RopeScalingType::Llama3) {
        if (!std::isfinite(ropeScaling.lowFreqFactor) ||
            !std::isfinite(ropeScaling.highFreqFactor) || ropeScaling.lowFreqFactor <= 0.0f ||
            ropeScaling.highFreqFactor <= ropeScaling.lowFreqFactor)
            throw ModelError(source, "ropeScaling.highFreqFactor", std::nullopt,
                             "llama3 RoPE scaling needs 0 < low_freq_factor < high_freq_factor");
        requireRange(source, "ropeScaling.originalContext", ropeScaling.originalContext,
                     maxContext);
    }
}

const std::vector<std::string>& supportedArchitectures() {
    static const std::vector<std::string> names{"llama", "mistral", "qwen2"};
    return names;
}

} // namespace inferscope::models
