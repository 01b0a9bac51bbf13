#pragma once
// Records the residual stream while the CPU reference runs a prompt (its ResidualObserver):
// per layer, per dimension max |h|, and every value for the INT8 level counts (chapter items
// 9 and 10). Enabled for the prompt's prefill only.
#include "compute/lab/ActivationRecording.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace inferscope::compute {

class ActivationCollector {
public:
    void begin(std::uint32_t layers, std::uint32_t hiddenSize);
    void stop() { enabled_ = false; }
    bool enabled() const { return enabled_; }
    void observe(std::uint32_t layer, std::uint32_t position, std::span<const float> row);

    const std::vector<std::vector<float>>& maxAbs() const { return maxAbs_; }
    std::uint32_t positions() const { return positions_; }
    // The residual stream as ResidualRecording, or null if a position is missing.
    std::shared_ptr<const ResidualRecording> recording() const;

private:
    bool enabled_ = false;
    std::vector<std::vector<float>> maxAbs_;
    std::uint32_t positions_ = 0;
    std::uint32_t hidden_ = 0;
    std::vector<std::vector<std::vector<float>>> values_; // [layer][position][dimension]
};

} // namespace inferscope::compute
