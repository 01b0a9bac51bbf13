#include "models/reference/OperationCounts.hpp"

#include <algorithm>

namespace inferscope::models {

std::uint64_t layerMatrixMacsPerToken(const ModelConfig& c) {
    const std::uint64_t hidden = c.hiddenSize;
    const std::uint64_t queryWidth = std::uint64_t(c.heads) * c.headDim;
    const std::uint64_t kvWidth = std::uint64_t(c.kvHeads) * c.headDim;
    const std::uint64_t attention = hidden * (queryWidth + 2 * kvWidth) + queryWidth * hidden;
    const std::uint64_t ffn = 3 * hidden * std::uint64_t(c.ffnSize);
    return attention + ffn;
}

std::uint64_t outputHeadMacsPerToken(const ModelConfig& c) {
    return std::uint64_t(c.hiddenSize) * c.vocabSize;
}

namespace {

// Sum over k = 1..n of min(k, window): the keys windowed layers score for positions 0..n-1.
std::uint64_t windowedKeys(std::uint64_t n, std::uint64_t window) {
    if (n <= window) return n * (n + 1) / 2;
    return window * (window + 1) / 2 + (n - window) * window;
}

} // namespace

std::uint64_t attentionMacsAtPosition(const ModelConfig& c, std::uint64_t position) {
    // Global layers score every earlier position, windowed ones at most the window.
    const std::uint64_t keys =
        (position + 1) * c.globalLayers() +
        std::min<std::uint64_t>(position + 1, c.slidingWindow) * c.windowedLayers();
    return keys * std::uint64_t(c.heads) * c.headDim * 2;
}

MacCount forwardMacs(const ModelConfig& c, std::uint64_t firstPosition, std::uint64_t tokens,
                     std::uint64_t logitRows) {
    MacCount count;
    count.projection =
        tokens * layerMatrixMacsPerToken(c) * c.layers + logitRows * outputHeadMacsPerToken(c);
    // Sum of (p + 1) for p in [first, first + tokens): closed form, no loop.
    const std::uint64_t last = firstPosition + tokens; // exclusive; sum of 1..last minus 1..first
    const std::uint64_t positions = last * (last + 1) / 2 - firstPosition * (firstPosition + 1) / 2;
    const std::uint64_t windowed =
        c.windowedLayers()
            ? windowedKeys(last, c.slidingWindow) - windowedKeys(firstPosition, c.slidingWindow)
            : 0;
    count.attention = (positions * c.globalLayers() + windowed * c.windowedLayers()) *
                      std::uint64_t(c.heads) * c.headDim * 2;
    return count;
}

MacCount generationMacs(const ModelConfig& c, std::uint64_t prompt, std::uint64_t generated,
                        bool cached) {
    MacCount total;
    if (generated == 0) return total;
    total += forwardMacs(c, 0, prompt, 1);
    for (std::uint64_t step = 1; step < generated; ++step) {
        // The step feeds generated token `step`, which sits at position prompt + step - 1.
        const std::uint64_t length = prompt + step;
        total += cached ? forwardMacs(c, length - 1, 1, 1) : forwardMacs(c, 0, length, 1);
    }
    return total;
}

} // namespace inferscope::models
