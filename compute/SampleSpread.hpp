#pragma once
// The sample standard deviation (n - 1 in the denominator) of repeated timings: the spread
// a caption weighs before it draws a conclusion from them. 0 below two values.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

namespace inferscope::compute {

// From running totals: the sum of the values and the sum of their squares.
inline double sampleStandardDeviation(double sum, double sumOfSquares, std::size_t count) {
    if (count < 2) return 0.0;
    const double n = double(count), mean = sum / n;
    const double variance = (sumOfSquares - n * mean * mean) / (n - 1);
    return std::sqrt(std::max(variance, 0.0)); // rounding can leave a tiny negative
}

// From the values themselves (two passes: no cancellation).
inline double sampleStandardDeviation(std::span<const double> values) {
    if (values.size() < 2) return 0.0;
    double mean = 0, squares = 0;
    for (double v : values) mean += v / double(values.size());
    for (double v : values) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / double(values.size() - 1));
}

} // namespace inferscope::compute
