#pragma once
// Chapter item 12 as a lab: the model as the target and as each draft scheme, two engines
// resident at once on the session engine's device (SpeculativeDecoding).
#include "compute/engine/Engine.hpp"
#include "compute/experiments/speculative/SpeculativeDecoding.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct SpeculativeRequest {
    std::string prompt = "Write a short story about a lighthouse keeper who finds a message in a "
                         "bottle.";
    bool chat = true;
    SpeculativeStudyOptions study; // its progress and cancel are the job's
    // The device and kernel options, for a session loaded without a backend (the CLI); a
    // session with a Vulkan engine uses that engine's.
    std::optional<EngineOptions> engine;
};

struct SpeculativeLab {
    static constexpr std::string_view id = "speculative";
    using Request = SpeculativeRequest;
    using Result = SpeculativeStudyPtr;
    // Throws std::invalid_argument on the CPU reference backend, for a scheme without a GPU
    // kernel, or a study longer than the context.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result);
};

} // namespace inferscope::compute::experiments
