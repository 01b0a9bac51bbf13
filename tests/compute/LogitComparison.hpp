#pragma once
// The GPU-vs-CPU logit check shared by the engine tests: every logit within
// 2e-3 x (1 + the row's largest |logit|) of the reference, and the same top-1 in every row.
#include "models/reference/Sampler.hpp"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <span>
#include <string>

namespace inferscope::tests {

// Compares rows of logits; returns the largest error relative to the allowed one
// (> 1 means a failure; 1e9 when a row's top-1 differs).
inline double compareLogits(std::span<const float> gpu, std::span<const float> cpu,
                            std::uint32_t vocab, const std::string& what) {
    double worst = 0;
    for (std::size_t row = 0; row * vocab < cpu.size(); ++row) {
        auto g = gpu.subspan(row * vocab, vocab);
        auto c = cpu.subspan(row * vocab, vocab);
        float scale = 0;
        for (float v : c) scale = std::max(scale, std::abs(v));
        const double allowed = 2e-3 * (1.0 + scale);
        for (std::uint32_t i = 0; i < vocab; ++i) {
            const double error = std::abs(double(g[i]) - double(c[i]));
            worst = std::max(worst, error / allowed);
            if (error > allowed) {
                qWarning("%s: row %zu logit %u gpu %g cpu %g (allowed %g)", what.c_str(), row, i,
                         g[i], c[i], allowed);
                return worst;
            }
        }
        if (models::argmax(g) != models::argmax(c)) {
            qWarning("%s: row %zu top-1 differs: gpu %d cpu %d", what.c_str(), row,
                     models::argmax(g), models::argmax(c));
            return 1e9;
        }
    }
    return worst;
}

} // namespace inferscope::tests
