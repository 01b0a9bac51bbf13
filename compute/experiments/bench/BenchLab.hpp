#pragma once
// What `inferscope-cli bench` measures, as a lab: per weight format an engine of its own on
// the device (all resident, their timed repeats taking turns), prompt processing and decode
// tokens/s, the per-kernel time of a decode step, each probe's cost, and the device's read
// bandwidth, dispatch floor and decode roofline; a note on whether fewer bits decoded faster.
#include "compute/engine/Engine.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct BenchRequest {
    std::vector<std::string> formats; // weight format names
    std::vector<std::uint32_t> prompts = {16, 64, 256, 512};
    std::vector<std::uint32_t> contexts = {16, 256, 1024};
    std::vector<std::uint32_t> batches = {1};
    std::uint32_t decodeSteps = 32;
    std::uint32_t repeats = 1;
    bool kernelBreakdown = true;
    EngineOptions engine; // device and kernel options; the format and sizes are set per run
};

struct BenchLab {
    static constexpr std::string_view id = "bench";
    using Request = BenchRequest;
    using Result = std::vector<Table>; // device, prompt, decode, kernels (if any), overhead
    // On the session's model (loaded without a backend: the engines are built here). Throws
    // std::invalid_argument for an unknown format or lengths over the model's context.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

} // namespace inferscope::compute::experiments
