#pragma once
// What a caption may claim about one run, computed from that run: whether the decode steps
// stay flat (their measured spread), and whether the matrix kernels are bound by memory
// bandwidth (the bytes/s they achieved against the measured read bandwidth). Panels state
// these figures, and make the claim only when the figures carry it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferscope::compute::experiments {

// The decode steps of one run: fastest, median and slowest, in seconds.
struct StepSpread {
    std::size_t steps = 0;
    double fastest = 0, median = 0, slowest = 0;
    // (slowest - fastest) / median: 0.2 means the steps differ by 20% of a typical step.
    double relative() const { return median > 0 ? (slowest - fastest) / median : 0; }
    // "Flat": every step within kFlatSpread of a typical step, over at least 3 steps.
    bool flat() const { return steps >= 3 && relative() <= kFlatSpread; }
    static constexpr double kFlatSpread = 0.2;
};
StepSpread stepSpread(std::span<const double> seconds);

// The kernels that multiply by a weight matrix (and so read the weights) in a decode step.
bool isMatrixKernel(std::string_view kernel);

// The matrix kernels of one decode step against the device's measured read bandwidth.
struct BandwidthUse {
    double matrixSeconds = 0;      // GPU time of the matrix kernels in the step
    std::uint64_t weightBytes = 0; // the weight bytes they read
    double achieved = 0;           // weightBytes / matrixSeconds, bytes/s
    double measured = 0;           // the streaming read probe, bytes/s
    double fraction() const { return measured > 0 ? achieved / measured : 0; }
    // Bound by bandwidth: the matrix kernels move at least kBoundFraction of what the
    // device can read at all.
    bool bandwidthBound() const { return fraction() >= kBoundFraction; }
    static constexpr double kBoundFraction = 0.6;
};
// kernels: (name, microseconds) of one decode step. Empty when a figure is missing (no
// profiled step, no weight byte count, no bandwidth measurement).
std::optional<BandwidthUse>
matrixBandwidthUse(const std::vector<std::pair<std::string, double>>& kernels,
                   std::uint64_t weightBytes, double measuredBytesPerSecond);

} // namespace inferscope::compute::experiments
