#pragma once
// Chapter items 9 and 10: activation outliers in the residual stream and what they do to
// INT8/INT4 activation quantization. The input is the residual stream after every layer at
// every prompt position: recorded here from the CPU reference transformer; the GPU engine's
// activation probe will fill the same ResidualRecording.
#include "compute/Table.hpp"
#include "models/ReferenceTransformer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace inferscope::compute::experiments {

struct ResidualRecording {
    std::uint32_t layers = 0;
    std::uint32_t positions = 0;
    std::uint32_t hidden = 0;
    std::vector<float> values; // [layer][position][dimension]

    std::span<const float> at(std::uint32_t layer, std::uint32_t position) const {
        return {values.data() + (std::size_t(layer) * positions + position) * hidden, hidden};
    }
};

// Runs the prompt through the reference (one prefill) and records the residual stream after
// each layer. Replaces the transformer's residual observer for the call, then clears it.
ResidualRecording recordResidualStream(models::ReferenceTransformer& transformer,
                                       std::span<const std::int32_t> tokens);

// Per layer, per dimension: max |h| over all positions ([layer][dimension]).
std::vector<std::vector<float>> residualMaxPerDimension(const ResidualRecording& recording);

// Distinct integer levels used when `values` are quantized symmetrically with `scale`
// (q = round(v / scale) clamped to [-qmax, qmax]); 1 if scale is 0.
std::uint32_t distinctLevels(std::span<const float> values, float scale, int qmax);

struct ActivationReportOptions {
    std::optional<std::uint32_t> layer; // default: 2/3 of the way up, like the chapter's 16 of 24
    std::uint32_t topK = 4;
};

// Tables:
//  "activation-layers":    per layer, the largest dimension, its max |h|, the median over
//                           dimensions of max |h|, their ratio;
//  "activation-histogram": at the chosen layer, dimensions per power-of-two bin of max |h|,
//                           with a text bar (one '#' per dimension, at most 40);
//  "activation-top-dims":  the top-K dimensions (by max |h| at the chosen layer), their values
//                           there and at their peak, and in how many layers each is in the top K;
//  "activation-levels":    INT8 (qmax 127) and INT4 (qmax 7) with one tensor-wide absmax scale
//                           over the chosen layer, with all dimensions and with the top K excluded:
//                           scale, distinct levels used over the tensor, ratio of the scales;
//  "activation-levels-per-dim": levels used per dimension (the top K, the 90th percentile, the
//                           median and the 10th percentile dimension) under both scales.
// Throws std::invalid_argument for a layer out of range, topK 0 or >= hidden, or an empty
// recording.
std::vector<Table> activationReport(const ResidualRecording& recording,
                                    const ActivationReportOptions& options = {});

} // namespace inferscope::compute::experiments
