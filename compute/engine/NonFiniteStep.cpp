#include "compute/engine/NonFiniteStep.hpp"

#include "models/reference/NonFinite.hpp"

#include <span>
#include <string>

namespace inferscope::compute {

bool logitsAreFinite(const StepResult& result) {
    for (const auto& sequence : result.sequences)
        if (models::firstNonFinite(sequence.logits)) return false;
    return true;
}

void throwNonFiniteStep(const models::ModelConfig& config, const std::vector<StepRowOrigin>& rows,
                        const std::optional<StepProbes>& probed) {
    if (probed && probed->residualStreamRows == rows.size() && !rows.empty()) {
        const std::size_t hidden = config.hiddenSize;
        const std::size_t layerFloats = rows.size() * hidden;
        const std::span<const float> stream(probed->residualStream);
        for (std::uint32_t l = 0; l < config.layers && stream.size() >= (l + 1) * layerFloats;
             ++l) {
            const auto bad = models::firstNonFinite(stream.subspan(l * layerFloats, layerFloats));
            if (!bad) continue;
            const StepRowOrigin& row = rows[bad->index / hidden];
            throw models::NonFiniteError(
                "sequence " + std::to_string(row.sequence) + ": " +
                models::nonFiniteMessage(int(l), "residual stream (the layer's output)",
                                         row.position, bad->index % hidden, bad->value));
        }
    }
    throw models::NonFiniteError(
        std::string("non-finite value at run time: the logits hold NaN or Inf") +
        (probed ? " while every layer's output is finite, so the final norm (output_norm) or "
                  "the output head overflowed"
                : "") +
        " (the weights are finite in the file; no result is given)");
}

} // namespace inferscope::compute
