#include "compute/experiments/run/RunEvidence.hpp"

#include <algorithm>
#include <array>

namespace inferscope::compute::experiments {

StepSpread stepSpread(std::span<const double> seconds) {
    StepSpread spread;
    if (seconds.empty()) return spread;
    std::vector<double> sorted(seconds.begin(), seconds.end());
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    spread.steps = n;
    spread.fastest = sorted.front();
    spread.slowest = sorted.back();
    spread.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    return spread;
}

bool isMatrixKernel(std::string_view kernel) {
    // The engine's dispatch labels of the projections and the output head (Engine.cpp).
    // qkv_rope_attention is qkv_rope with the attention in its dispatch (CPU devices): it
    // counts whole, so the bandwidth the matrix kernels reach comes out low, never high, as
    // leaving it out would make it (its weight bytes counted, its time not).
    constexpr std::array<std::string_view, 6> matrices = {
        "qkv_rope", "qkv_rope_attention", "attn_out", "ffn_gateup", "ffn_down", "output_head"};
    return std::find(matrices.begin(), matrices.end(), kernel) != matrices.end();
}

std::optional<BandwidthUse>
matrixBandwidthUse(const std::vector<std::pair<std::string, double>>& kernels,
                   std::uint64_t weightBytes, double measuredBytesPerSecond) {
    BandwidthUse use;
    for (const auto& [name, microseconds] : kernels)
        if (isMatrixKernel(name)) use.matrixSeconds += microseconds * 1e-6;
    if (!(use.matrixSeconds > 0) || weightBytes == 0 || !(measuredBytesPerSecond > 0))
        return std::nullopt;
    use.weightBytes = weightBytes;
    use.achieved = double(weightBytes) / use.matrixSeconds;
    use.measured = measuredBytesPerSecond;
    return use;
}

} // namespace inferscope::compute::experiments
