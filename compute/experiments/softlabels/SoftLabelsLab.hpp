#pragma once
// Chapter item 13 as a lab: the next-token distribution after a prompt, and each scheme's
// distance from it; the reference and the schemes run one at a time on the session's backend
// (compute/experiments/quantization/SchemeBackends), like the quality report.
#include "compute/experiments/softlabels/SoftLabels.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct SoftLabelRequest {
    std::string prompt = "She poured the milk into the";
    bool chat = false;
    std::vector<models::QuantSchemeSpec> schemes; // empty: no divergence table
};

// The schemes the panel's button and the CLI compare by default.
std::vector<models::QuantSchemeSpec> defaultSoftLabelSchemes();

struct SoftLabelsLab {
    static constexpr std::string_view id = "soft-labels";
    using Request = SoftLabelRequest;
    using Result = NextTokenDistributionPtr;
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    // The tables at T = 1 and 2, top 5 (the CLI's defaults; the panel picks its own T).
    static std::vector<Table> tables(const Result& result);
};

} // namespace inferscope::compute::experiments
