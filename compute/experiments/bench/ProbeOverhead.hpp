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

// The caption of a per-kernel table: what its kernel times add up to per step, against the
// same step untimed. With a timestamp after every dispatch, a device whose timestamps are
// not free (lavapipe with its thread pool: the probe-overhead table showed 1.27-1.29x the
// step in some runs on two cores, 1.03-1.06x with the pool off) adds that cost to every
// kernel's time, so short kernels look slower than they run; the caption says how much, from
// these two figures, where the gap is over a tenth of the step.
std::string timestampCostNote(double kernelMilliseconds, double untimedStepMilliseconds,
                              std::uint32_t dispatches);

} // namespace inferscope::compute
