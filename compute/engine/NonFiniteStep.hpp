#pragma once
// No silent non-finite results from the engine: a step whose logits hold NaN or Inf is rolled
// back and run again with the residual stream copied after every layer
// (ProbeOptions::residualStream: one transfer per layer, no extra dispatch), and the error
// names the first layer whose output is not finite. A normal step pays one scan of the logits
// it read back anyway.
#include "compute/engine/Engine.hpp"

#include <optional>
#include <vector>

namespace inferscope::compute {

// Whether every logit of a step is finite.
bool logitsAreFinite(const StepResult& result);

// Where a row of a step came from, in the step's order.
struct StepRowOrigin {
    SequenceId sequence = 0;
    std::uint32_t position = 0;
};

// Throws models::NonFiniteError naming the first layer whose rows in `probed` (a run of the
// failed step with ProbeOptions::residualStream; nullopt when that run failed too) hold a NaN
// or an infinity, with the sequence and position of the row; or, when every layer's output is
// finite, the final norm and the output head.
[[noreturn]] void throwNonFiniteStep(const models::ModelConfig& config,
                                     const std::vector<StepRowOrigin>& rows,
                                     const std::optional<StepProbes>& probed);

} // namespace inferscope::compute
