#pragma once
// The class report as a lab: every chapter lab run on the session's model, one after another,
// each through its own Lab::run (the same function its panel and its CLI command call), with
// progress and an estimate of the time left, cancellable between and inside labs. The result
// is the report (ClassReport); ReportHtml writes it as one file.
#include "compute/experiments/report/ClassReport.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferscope::compute::experiments {

// The sizes each lab runs at. quick: a class's time on two lavapipe cores; full: the chapter's
// own sizes (256 generated tokens, 144 speculative positions, 64 requests, B up to 64, ...).
struct ReportProfile {
    std::string name;
    std::int32_t cachingTokens = 32;          // items 1-3: tokens generated cached and uncached
    std::uint32_t headMaxTokens = 4096;       // item 1: the single head up to this n
    std::vector<std::uint32_t> benchPrompts;  // item 4: P
    std::vector<std::uint32_t> benchContexts; // item 4: C
    std::uint32_t benchDecodeSteps = 8;
    std::vector<std::uint32_t> batches;   // item 6
    std::uint32_t schedulerRequests = 16; // item 7: the skewed mix, scaled from 64
    std::uint32_t schedulerSlots = 8;
    bool allSchemes = false;                 // items 8, 11: every scheme (else a short list)
    std::int64_t perplexityTokens = 128;     // item 11
    std::int32_t batteryQuestions = 4;       // item 11
    std::uint32_t speculativePositions = 32; // item 12
    std::int32_t speculativeRunTokens = 16;
    std::vector<std::uint32_t> speculativeLengths;
    std::vector<std::string> speculativeDrafts; // empty: the study's own list
    std::uint32_t schedulerLongest = 231;       // the mix's longest request (the chapter's: 231)
};
ReportProfile reportProfile(const std::string& name); // "quick" or "full"; else invalid_argument

struct ClassReportRequest {
    ReportProfile profile = reportProfile("quick");
    // The model file and the command line for the provenance table (standardProvenance: the
    // file's size and SHA-256, the CPU, the commit, the date; hashed on the job's thread);
    // the device, driver and the model's shape are added from the session.
    std::filesystem::path modelFile;
    std::string commandLine;
    // More rows a front end knows (first).
    std::vector<std::pair<std::string, std::string>> provenance;
    std::set<int> items; // chapter items to run; empty: all 14
};

struct ClassReportLab {
    static constexpr std::string_view id = "class-report";
    using Request = ClassReportRequest;
    using Result = ClassReport;
    // A lab that fails leaves its section "not measured" with the reason; JobCancelled ends
    // the whole report.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    // The provenance table, the summary (item, agreement, verdict, wall time), then every
    // section's tables.
    static std::vector<Table> tables(const Result& result);
};

} // namespace inferscope::compute::experiments
