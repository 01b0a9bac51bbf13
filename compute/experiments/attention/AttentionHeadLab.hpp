#pragma once
// Chapter item 1's single attention head timed both ways (AttentionHeadCost) as a lab: on the
// session engine's Vulkan device, or without one on the device the request names. Needs no
// model.
#include "compute/experiments/attention/AttentionHeadCost.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct AttentionHeadRequest {
    AttentionHeadOptions options;
    // The device when the session has no Vulkan engine (the engine's device otherwise).
    std::uint32_t deviceIndex = 0;
};

struct AttentionHeadLab {
    static constexpr std::string_view id = "attention-head";
    using Request = AttentionHeadRequest;
    struct Result {
        std::vector<AttentionHeadPoint> points;
        std::uint32_t headDim = 0;
        std::string device;
    };
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result);
};

} // namespace inferscope::compute::experiments
