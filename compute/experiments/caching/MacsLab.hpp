#pragma once
// Chapter items 2 and 3 as `inferscope-cli macs` prints them: multiply-accumulates for T
// generated tokens after a prompt of P from the formula, and (unless formula only) a real
// cached vs uncached run of N tokens whose engine counter is set beside the formula step by
// step, with the peak memory of both runs. The MACs panel draws the same tables from the
// Caching lab's comparison.
#include "compute/Table.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct MacsRequest {
    std::uint32_t promptTokens = 16;     // P
    std::uint32_t generatedTokens = 256; // T of the formula's growth table
    std::uint32_t measuredTokens = 32;   // N of the real run (at most T)
    bool formulaOnly = false;            // no run (a session loaded without a backend)
};

struct MacsResult {
    std::vector<Table> tables;
    bool counterAgrees = true; // every measured step's counter equals the formula
};

struct MacsLab {
    static constexpr std::string_view id = "macs";
    using Request = MacsRequest;
    using Result = MacsResult;
    // Throws std::invalid_argument when P + T exceed the model's context.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result.tables; }
};

} // namespace inferscope::compute::experiments
