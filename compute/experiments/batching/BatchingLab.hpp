#pragma once
// Chapter item 6 as a lab: the batched decode sweep (BatchingSweep) on the session's Vulkan
// engine, with the device's read bandwidth for the roofline.
#include "compute/experiments/batching/BatchingSweep.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct BatchingRequest {
    std::vector<std::uint32_t> batches = {1, 2, 4, 8, 16, 32, 64};
    std::uint32_t context = 64;
    std::uint32_t steps = 8;
    std::uint32_t exactnessSequences = 3;
};

struct BatchingLab {
    static constexpr std::string_view id = "batching";
    using Request = BatchingRequest;
    using Result = std::vector<Table>;
    // Throws std::invalid_argument on the CPU reference (one sequence at a time).
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

} // namespace inferscope::compute::experiments
