#include "models/reference/Sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace inferscope::models {

std::int32_t argmax(std::span<const float> values) {
    if (values.empty()) throw std::invalid_argument("argmax of an empty list");
    std::size_t best = 0;
    for (std::size_t i = 1; i < values.size(); ++i)
        if (values[i] > values[best]) best = i; // strict: the lowest index wins a tie
    return static_cast<std::int32_t>(best);
}

Sampler::Sampler(SamplingOptions options) : options_(options), rng_(options.seed) {}

namespace {

// llama.cpp's repetition penalty: every distinct token among the last `lastN` of the history
// (all of it when lastN < 0) is penalized once, positive logits divided by the penalty and
// negative ones multiplied, so both move towards "less likely" whatever their sign.
void applyRepetitionPenalty(std::vector<float>& logits, std::span<const std::int32_t> history,
                            float penalty, std::int32_t lastN) {
    if (penalty == 1.0f || lastN == 0 || history.empty()) return;
    const std::size_t window =
        lastN < 0 ? history.size() : std::min<std::size_t>(history.size(), std::size_t(lastN));
    std::vector<std::int32_t> recent(history.end() - std::ptrdiff_t(window), history.end());
    std::sort(recent.begin(), recent.end());
    recent.erase(std::unique(recent.begin(), recent.end()), recent.end());
    for (std::int32_t token : recent) {
        if (token < 0 || std::size_t(token) >= logits.size()) continue;
        float& logit = logits[std::size_t(token)];
        logit = logit > 0.0f ? logit / penalty : logit * penalty;
    }
}

} // namespace

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> history) {
    if (logits.empty()) throw std::invalid_argument("sampling from empty logits");
    std::vector<float> adjusted(logits.begin(), logits.end());
    applyRepetitionPenalty(adjusted, history, options_.repeatPenalty, options_.repeatLastN);
    if (options_.greedy || options_.temperature <= 0.0f) return argmax(adjusted);

    // Order: temperature, top-k, top-p, then a draw. Candidates best first; equal logits keep
    // the lower id first so the kept set never depends on the sort's whims.
    for (float& logit : adjusted) logit /= options_.temperature;
    std::vector<std::int32_t> candidates(adjusted.size());
    std::iota(candidates.begin(), candidates.end(), 0);
    const auto better = [&](std::int32_t a, std::int32_t b) {
        const float la = adjusted[std::size_t(a)];
        const float lb = adjusted[std::size_t(b)];
        return la > lb || (la == lb && a < b);
    };
    std::size_t kept = candidates.size();
    if (options_.topK > 0 && std::size_t(options_.topK) < kept) kept = std::size_t(options_.topK);
    std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(kept),
                      candidates.end(), better);
    candidates.resize(kept);

    // Softmax over the kept candidates (max subtracted; normalizer in double because it sums
    // up to a vocabulary's worth of terms).
    const float maxLogit = adjusted[std::size_t(candidates.front())];
    std::vector<double> probabilities(kept);
    double total = 0.0;
    for (std::size_t i = 0; i < kept; ++i) {
        probabilities[i] = std::exp(double(adjusted[std::size_t(candidates[i])] - maxLogit));
        total += probabilities[i];
    }
    for (double& p : probabilities) p /= total;

    // Top-p: the smallest best-first prefix whose probability reaches p (never empty, so the
    // most likely token always survives).
    if (options_.topP < 1.0f) {
        double cumulative = 0.0;
        std::size_t prefix = 0;
        while (prefix < kept) {
            cumulative += probabilities[prefix++];
            if (cumulative >= double(options_.topP)) break;
        }
        kept = std::max<std::size_t>(prefix, 1);
    }
    double keptTotal = 0.0;
    for (std::size_t i = 0; i < kept; ++i) keptTotal += probabilities[i];

    // The draw uses the generator's raw bits, not std::uniform_real_distribution, whose
    // algorithm differs between standard libraries: a seed means the same tokens everywhere.
    const double uniform = double(rng_() >> 11) * 0x1.0p-53; // [0, 1)
    const double target = uniform * keptTotal;
    double cumulative = 0.0;
    for (std::size_t i = 0; i < kept; ++i) {
        cumulative += probabilities[i];
        if (target < cumulative) return candidates[i];
    }
    return candidates[kept - 1]; // rounding left target at the very top
}

} // namespace inferscope::models
