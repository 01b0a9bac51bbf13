#pragma once
// Multiply-accumulates of a decoder-only transformer (chapter item 2), split the way the
// chapter argues: projections (every weight matrix once per token that runs through it) and
// attention (a token at position p scores against p + 1 keys and sums as many values, per
// query head). Norms, RoPE and softmax are left out: they are O(hidden) per token.
#include "models/ModelConfig.hpp"

#include <cstdint>

namespace inferscope::models {

struct MacCount {
    std::uint64_t projection = 0;
    std::uint64_t attention = 0;
    std::uint64_t total() const { return projection + attention; }
    MacCount& operator+=(const MacCount& other) {
        projection += other.projection;
        attention += other.attention;
        return *this;
    }
    bool operator==(const MacCount&) const = default;
};

// Weights of one layer's matrices (Q, K, V, O, gate, up, down): MACs per token per layer.
std::uint64_t layerMatrixMacsPerToken(const ModelConfig& config);
// The output head (hidden x vocabulary): MACs per token whose logits are computed.
std::uint64_t outputHeadMacsPerToken(const ModelConfig& config);
// Attention of one token at `position` (0-based) over positions 0..position, all layers:
// (position + 1) x heads x head dim x 2 (scores, then the weighted sum of values) per global
// layer, min(position + 1, window) per sliding-window layer.
std::uint64_t attentionMacsAtPosition(const ModelConfig& config, std::uint64_t position);

// One forward pass over `tokens` consecutive positions starting at `firstPosition`, with
// logits for `logitRows` of them.
MacCount forwardMacs(const ModelConfig& config, std::uint64_t firstPosition, std::uint64_t tokens,
                     std::uint64_t logitRows = 1);

// Generating `generated` tokens after a prompt of `prompt` tokens, greedy, from a cold start.
// The prefill makes the first token; each later token is one more step. Cached: a step runs
// only its new token; uncached: each step runs the whole sequence again (logits for the last
// position only).
MacCount generationMacs(const ModelConfig& config, std::uint64_t prompt, std::uint64_t generated,
                        bool cached);

} // namespace inferscope::models
