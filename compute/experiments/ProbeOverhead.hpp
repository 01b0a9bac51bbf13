#pragma once
// What the probes cost: the same greedy decode timed with each probe off and on, so the
// panels can say how much of what they show is the act of measuring.
#include "compute/engine/Engine.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::compute {

struct ProbeCost {
    std::string probe; // "none", "residual max |h|", "residual stream copy", "kernel timestamps"
    double decodeStepMilliseconds = 0;
    double relativeToNone = 1.0; // step time / step time without probes
};

// Decodes `steps` tokens after a `context`-token prompt once per probe setting (best of
// `repeats`); the engine's own probe settings are restored afterwards.
std::vector<ProbeCost> measureProbeOverhead(Engine& engine, std::uint32_t context = 64,
                                            std::uint32_t steps = 16, int repeats = 2);

} // namespace inferscope::compute
