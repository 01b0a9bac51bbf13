#pragma once
// Chapter items 8 to 11 as labs: the weight error of every projection matrix per scheme
// (WeightReport), the quality of each scheme (QualityReport: perplexity, the factual battery,
// agreement), the residual stream's outliers and level counts recorded on the CPU reference
// (ActivationReport: the window records them during a generation instead), and the perplexity
// of the session's own backend on a text.
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "compute/experiments/quantization/QualityReport.hpp"
#include "compute/experiments/quantization/WeightReport.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct WeightReportLab {
    static constexpr std::string_view id = "weight-report";
    using Request = WeightReportOptions; // schemes: at least one
    using Result = std::vector<Table>;
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

// Every scheme runs its own weights on the session's backend (SchemeBackends: on Vulkan
// packed straight into the scheme's GPU format); the session's generation format is put back
// when the report ends.
struct QualityRequest {
    std::vector<models::QuantSchemeSpec> schemes; // empty: the standard list
    std::optional<std::filesystem::path> text;    // perplexity text; empty: the corpus
    std::int64_t perplexityTokens = 256;          // 0: no perplexity
    std::uint32_t context = 512;                  // window (perplexityContext)
    std::optional<std::filesystem::path> battery; // empty: resources/factual-battery.json
    std::int32_t batteryQuestions = -1;           // -1: all; 0: no battery and no agreement
    std::int32_t agreementTokens = -1;            // -1: 12 per question
    bool requireText = false; // true: a missing text is an error (else perplexity is skipped)
    bool requireBattery = false;
};

struct QualityReportLab {
    static constexpr std::string_view id = "quality-report";
    using Request = QualityRequest;
    using Result = std::vector<Table>;
    // Progress per scheme with an estimate of the time left.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

struct ActivationReportRequest {
    std::string prompt;
    bool chat = false;
    ActivationReportOptions options;
};

struct ActivationReportLab {
    static constexpr std::string_view id = "activation-report";
    using Request = ActivationReportRequest;
    struct Result {
        std::vector<Table> tables;
        std::size_t promptTokens = 0;
    };
    // The prompt's residual stream on the CPU reference over the stored tensors.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result.tables; }
};

struct PerplexityRequest {
    std::filesystem::path text;
    std::uint32_t context = 512;  // shortened to a shorter text (perplexityContext)
    std::uint64_t tokenLimit = 0; // 0: the whole text
};

struct PerplexityLab {
    static constexpr std::string_view id = "perplexity";
    using Request = PerplexityRequest;
    using Result = std::vector<Table>; // "perplexity"
    // On the session's own backend (its format, its cache setting).
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

} // namespace inferscope::compute::experiments
