#pragma once
// Chapter item 8: what each weight quantization scheme does to the model's projection
// matrices. Every q, k, v, o, gate, up and down matrix of every layer is packed with each
// scheme and dequantized again on the host; the relative error ||W - W^|| / ||W|| (Frobenius)
// is summarized per scheme, and the worst matrices' outlier statistics explain the worst rows.
// The reference W is the model's weights as stored (dequantized to f32): for a quantized
// file that is the file's own precision, so "as-stored" has error 0 by definition.
#include "compute/Table.hpp"
#include "models/LoadedModel.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct WeightStatistics {
    std::uint64_t count = 0;
    double meanAbs = 0;
    double mean = 0;
    double std = 0; // population standard deviation around the mean
    double maxAbs = 0;
    std::uint64_t beyondSixSigma = 0; // |w - mean| > 6 std
    double maxOverStd() const { return std > 0 ? maxAbs / std : 0; }
};
WeightStatistics weightStatistics(std::span<const float> weights);

// Canonical names of the projection matrices in layer order, q k v o gate up down each.
std::vector<std::string> projectionMatrixNames(const models::WeightStore& weights);

// Accepts "blk.12.ffn_down.weight" or the HF spelling "model.layers.12.mlp.down_proj.weight";
// returns the canonical name, or nullopt if it is not a projection matrix name.
std::optional<std::string> canonicalProjectionName(const std::string& name);

struct WeightReportOptions {
    std::vector<models::QuantSchemeSpec> schemes; // empty: models::standardQuantSchemes()
    std::optional<std::string> matrix;            // also report this matrix's error and statistics
    unsigned threads = 2;
};

// Tables "weight-error" (one row per scheme: bits per weight, mean / median / worst error,
// the worst matrix, bytes of the projections and of the whole model under the scheme) and
// "weight-outliers" (statistics of each scheme's worst matrix and of the chosen one).
// Throws std::invalid_argument for an unknown matrix name or a model without projections.
std::vector<Table> weightErrorReport(const models::WeightStore& weights,
                                     const WeightReportOptions& options = {});
std::vector<Table> weightErrorReport(const models::LoadedModel& model,
                                     const WeightReportOptions& options = {});

} // namespace inferscope::compute::experiments
