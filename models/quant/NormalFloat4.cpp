#include "models/quant/NormalFloat4.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inferscope::models {

double normalQuantile(double p) {
    if (!(p > 0.0 && p < 1.0)) throw std::domain_error("normalQuantile: p must be in (0, 1)");
    // Bisection on the CDF, 0.5 erfc(-x / sqrt 2): slow but obviously right, and it runs
    // only 15 times per process. 200 halvings of [-40, 40] reach double resolution.
    double low = -40.0, high = 40.0;
    for (int i = 0; i < 200; ++i) {
        const double middle = 0.5 * (low + high);
        if (0.5 * std::erfc(-middle / std::sqrt(2.0)) < p)
            low = middle;
        else
            high = middle;
    }
    return 0.5 * (low + high);
}

namespace {

std::array<float, 16> computeNf4Levels() {
    // QLoRA's construction: the outermost quantile sits at probability
    // delta = (1 - 1/(2*15) + 1 - 1/(2*16)) / 2 = 0.96771 (the mean of the two ways of
    // placing 15 or 16 quantiles, and it avoids the infinite quantile at 1). Eight positive
    // levels are the quantiles at probabilities evenly spaced from delta down to 1/2
    // (excluding 1/2), seven negative ones likewise with 7 steps, plus an exact 0; then
    // everything is divided by the largest so the range is [-1, 1].
    const double delta = 0.5 * ((1.0 - 1.0 / 30.0) + (1.0 - 1.0 / 32.0));
    std::array<double, 16> levels{};
    std::size_t next = 0;
    for (int i = 0; i < 8; ++i) levels[next++] = normalQuantile(delta + (0.5 - delta) * i / 8.0);
    for (int i = 0; i < 7; ++i) levels[next++] = -normalQuantile(delta + (0.5 - delta) * i / 7.0);
    levels[next++] = 0.0;
    std::sort(levels.begin(), levels.end());
    const double largest = levels.back();
    std::array<float, 16> result{};
    for (std::size_t i = 0; i < 16; ++i) result[i] = float(levels[i] / largest);
    return result;
}

} // namespace

const std::array<float, 16>& nf4Levels() {
    static const std::array<float, 16> levels = computeNf4Levels();
    return levels;
}

int nearestNf4Level(float x) {
    // Midpoints between neighbouring levels; the level index is how many midpoints lie below x.
    static const std::array<float, 15> midpoints = [] {
        std::array<float, 15> m{};
        const auto& levels = nf4Levels();
        for (std::size_t i = 0; i < 15; ++i) m[i] = 0.5f * (levels[i] + levels[i + 1]);
        return m;
    }();
    return int(std::lower_bound(midpoints.begin(), midpoints.end(), x) - midpoints.begin());
}

} // namespace inferscope::models
