#pragma once
// Chapter items 9 and 10: activation outliers in the residual stream and what they do to
// INT8/INT4 activation quantization. The input is the residual stream after every layer at
// every prompt position (compute/lab/ActivationRecording.hpp): recorded here from the CPU
// reference transformer, or by the GPU engine's activation probe during a generation.
#include "compute/Table.hpp"
#include "compute/lab/ActivationRecording.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace inferscope::compute::experiments {

// Runs the prompt through the reference (one prefill) and records the residual stream after
// each layer. Replaces the transformer's residual observer for the call, then clears it.
ResidualRecording recordResidualStream(models::ReferenceTransformer& transformer,
                                       std::span<const std::int32_t> tokens);

// Per layer, per dimension: max |h| over all positions ([layer][dimension]).
std::vector<std::vector<float>> residualMaxPerDimension(const ResidualRecording& recording);

// Distinct integer levels used when `values` are quantized symmetrically with `scale`
// (q = round(v / scale) clamped to [-qmax, qmax]); 1 if scale is 0.
std::uint32_t distinctLevels(std::span<const float> values, float scale, int qmax);

// The tables below are the one source for both the CLI (`report activations`) and the
// window's activation panels: the panels draw them, they do not compute their own.

// "activation-layers": per layer, the largest dimension, its max |h|, the median over
// dimensions of max |h|, their ratio and the top K dimensions. maxima: [layer][dimension].
Table activationLayers(const std::vector<std::vector<float>>& maxima, std::uint32_t topK,
                       std::uint32_t positions);
// "activation-histogram": dimensions of `layer` per octave bin of max |h| ([0, 1), [1, 2),
// [2, 4), ... up to the bin holding the largest), with a text bar. Throws
// std::invalid_argument for a layer out of range.
Table activationHistogram(const std::vector<std::vector<float>>& maxima, std::uint32_t layer);
// "outlier-persistence": layers x the `dimensions` dimensions that most often rank among the
// top `dimensions` of a layer (ties: the larger peak), as columns "dim <d>"; each cell is that
// dimension's max |h| over its layer's median. Columns that stay large down the rows are
// outliers that persist across layers.
Table outlierPersistence(const std::vector<std::vector<float>>& maxima, int dimensions = 8);
// "activation-levels-by-dimension": one row per dimension of `layer`, largest max |h| first:
// rank, dimension, max |h|, levels used under INT8 and INT4 with the tensor-wide scale and
// with the top K excluded (empty for the excluded dimensions themselves). A dimension can use
// at most `positions` levels. Throws std::invalid_argument for a layer out of range.
Table levelsByDimension(const ResidualRecording& recording, std::uint32_t layer,
                        std::uint32_t topK);

struct ActivationReportOptions {
    std::optional<std::uint32_t> layer; // default: 2/3 of the way up, like the chapter's 16 of 24
    std::uint32_t topK = 4;
};

// Tables:
//  "activation-layers":    per layer, the largest dimension, its max |h|, the median over
//                           dimensions of max |h|, their ratio;
//  "activation-histogram": activationHistogram at the chosen layer;
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

// levelsTopK must be below the recording's hidden size (else no level tables).
ActivationPanelTables activationPanelTables(const std::vector<std::vector<float>>& maxima,
                                            std::uint32_t positions,
                                            const ResidualRecording* recording,
                                            std::uint32_t topDimensions = 4,
                                            std::uint32_t levelsTopK = 4);

} // namespace inferscope::compute::experiments
