#pragma once
// Next-token selection from logits: greedy, or temperature / top-k / top-p with a seed;
// repetition penalty over the recent history (llama.cpp's rule: divide positive logits,
// multiply negative ones).
#include <cstdint>
#include <random>
#include <span>

namespace inferscope::models {

struct SamplingOptions {
    bool greedy = true;
    float temperature = 0.8f;
    std::int32_t topK = 40; // <= 0: off
    float topP = 0.95f;     // >= 1: off
    std::uint64_t seed = 0;
    float repeatPenalty = 1.0f; // 1: off
    std::int32_t repeatLastN = 64;
};

class Sampler {
public:
    explicit Sampler(SamplingOptions options);
    std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> history);
    const SamplingOptions& options() const { return options_; }

private:
    SamplingOptions options_;
    std::mt19937_64 rng_;
};

// Index of the largest value (lowest index on ties).
std::int32_t argmax(std::span<const float> values);

} // namespace inferscope::models
