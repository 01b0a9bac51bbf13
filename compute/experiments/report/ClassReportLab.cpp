#include "compute/experiments/report/ClassReportLab.hpp"

#include "compute/Stopwatch.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/experiments/report/Provenance.hpp"
#include "compute/experiments/report/ReportItems.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

constexpr std::array<ItemComposer, 14> kComposers{
    composeCachedVsUncached, composeMacs,     composePeakMemory, composePrefillDecode,
    composeKvBytes,          composeBatching, composeScheduling, composeWeightError,
    composeOutliers,         composeLevels,   composeQuality,    composeSpeculative,
    composeSoftLabels,       composeBudget};

// Rough share of a quick report's time per item (seconds measured on two lavapipe cores with
// the default model), for the estimate of the time left before an item has run; once some
// items have run, the elapsed time rescales these.
constexpr std::array<double, 14> kItemWeights{11, 1.5, 0.1, 18, 0.1, 12, 30,
                                              6,  1,   0.1, 50, 25,  1,  0.1};

std::string duration(double seconds) {
    const auto s = std::int64_t(std::lround(seconds));
    if (s < 60) return std::to_string(s) + " s";
    return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
}

} // namespace

ReportProfile reportProfile(const std::string& name) {
    ReportProfile p;
    p.name = name;
    if (name == "quick") {
        p.cachingTokens = 24;
        p.headMaxTokens = 1024;
        p.benchPrompts = {16, 64, 256};
        p.benchContexts = {16, 256};
        p.benchDecodeSteps = 4;
        p.batches = {1, 2, 4, 8, 16};
        p.schedulerRequests = 12;
        p.schedulerLongest = 64;
        p.schedulerSlots = 8;
        p.perplexityTokens = 64; // the shortest perplexity window (kMinimumPerplexityTokens)
        p.batteryQuestions = 1;
        p.speculativePositions = 16;
        p.speculativeRunTokens = 12;
        p.speculativeLengths = {4};
        p.speculativeDrafts = {"int4-g128"};
        return p;
    }
    if (name == "full") {
        // The chapter's sizes: 256 tokens cached and uncached, the head up to 4,096, P and C up
        // to 1,024, B up to 64, the 64-request mix, 2,048 perplexity tokens, 16 questions, 144
        // speculative positions.
        p.cachingTokens = 256;
        p.headMaxTokens = 4096;
        p.benchPrompts = {16, 64, 256, 1024};
        p.benchContexts = {16, 256, 1024};
        p.benchDecodeSteps = 16;
        p.batches = {1, 2, 4, 8, 16, 32, 64};
        p.schedulerRequests = 64;
        p.schedulerSlots = 8;
        p.allSchemes = true;
        p.perplexityTokens = 2048;
        p.batteryQuestions = 16;
        p.speculativePositions = 144;
        p.speculativeRunTokens = 64;
        p.speculativeLengths = {2, 4, 8};
        return p;
    }
    throw std::invalid_argument("unknown report profile '" + name + "' (quick or full)");
}

ClassReport ClassReportLab::run(LabContext& lab, const Request& request,
                                const JobControl& control) {
    ClassReport report;
    report.profile = request.profile.name;
    Table& provenance = report.provenance;
    provenance.id = "provenance";
    provenance.title = "Where these numbers come from";
    provenance.addColumn("property").addColumn("value");
    for (const auto& [key, value] : request.provenance) provenance.addRow({key, value});
    if (!request.modelFile.empty()) {
        control.report("hashing " + request.modelFile.filename().string() + " for its SHA-256");
        for (const auto& [key, value] : standardProvenance(request.modelFile, request.commandLine))
            provenance.addRow({key, value});
    }
    const auto& config = lab.model().config;
    provenance.addRow({std::string("model"), config.architecture + ", " +
                                                 std::to_string(config.layers) + " layers, " +
                                                 std::to_string(config.heads) + " query heads, " +
                                                 std::to_string(config.kvHeads) + " KV heads of " +
                                                 std::to_string(config.headDim) + ", context " +
                                                 std::to_string(config.contextLength)});
    if (Engine* engine = gpuEngineOf(lab)) {
        const auto& info = engine->context().info();
        provenance.addRow({std::string("device"), info.name + " (" + info.type + ")"});
        provenance.addRow({std::string("driver"), info.driver});
        provenance.addRow({std::string("Vulkan API"), apiVersionString(info.apiVersion)});
        provenance.addRow({std::string("weight format"), engine->weightFormatLabel()});
    } else {
        provenance.addRow({std::string("device"), std::string("CPU reference (no Vulkan engine)")});
    }
    provenance.addRow({std::string("profile"), request.profile.name});

    std::vector<int> items;
    for (int item = 1; item <= 14; ++item)
        if (request.items.empty() || request.items.count(item)) items.push_back(item);
    double totalWeight = 0, doneWeight = 0;
    for (int item : items) totalWeight += kItemWeights[std::size_t(item - 1)];
    const auto start = Clock::now();
    ReportRun shared{lab, request.profile, control, {}, {}};

    for (std::size_t index = 0; index < items.size(); ++index) {
        control.throwIfCancelled();
        const int item = items[index];
        const auto& claim = chapterClaims()[std::size_t(item - 1)];
        const double elapsed = secondsSince(start);
        const double scale = doneWeight > 0 ? elapsed / doneWeight : 1.0;
        const double left = (totalWeight - doneWeight) * scale;
        const int percent = int(100 * doneWeight / totalWeight);
        const std::string prefix = "item " + std::to_string(item) + " (" +
                                   std::to_string(index + 1) + " of " +
                                   std::to_string(items.size()) + "): " + claim.title;
        const std::string estimate =
            "about " + duration(left) + " left" + (doneWeight > 0 ? "" : ", a first guess");
        control.report(prefix + ", " + estimate, percent);
        // The lab's own stages, under the item's name; its cancel is the report's.
        JobControl itemControl;
        itemControl.cancel = control.cancel;
        itemControl.progress = [&](const std::string& stage, int) {
            control.report(prefix + ": " + stage + "; " + estimate, percent);
        };
        ReportSection section;
        section.chapter = claim;
        const auto itemStart = Clock::now();
        ReportRun run{lab, request.profile, itemControl, shared.caching, shared.activations};
        try {
            kComposers[std::size_t(item - 1)](section, run);
        } catch (const JobCancelled&) {
            throw;
        } catch (const std::exception& e) {
            if (control.cancelled()) throw JobCancelled();
            section.agreement = Agreement::NotMeasured;
            section.verdict = std::string("Not measured on this machine: ") + e.what();
        }
        shared.caching = run.caching;
        shared.activations = run.activations;
        section.wallSeconds = secondsSince(itemStart);
        report.sections.push_back(std::move(section));
        doneWeight += kItemWeights[std::size_t(item - 1)];
    }
    report.totalSeconds = secondsSince(start);
    control.report("report composed in " + duration(report.totalSeconds), 100);
    return report;
}

std::vector<Table> ClassReportLab::tables(const Result& result) {
    Table summary;
    summary.id = "class-report-summary";
    summary.title = "The chapter beside this machine (profile " + result.profile + ")";
    summary.addColumn("item").addColumn("chapter").addColumn("agreement").addColumn("wall", "s", 1);
    summary.addColumn("verdict");
    for (const auto& s : result.sections)
        summary.addRow({std::int64_t(s.chapter.item), s.chapter.title,
                        std::string(agreementName(s.agreement)), s.wallSeconds, s.verdict});
    std::vector<Table> tables{result.provenance, summary};
    for (const auto& s : result.sections)
        tables.insert(tables.end(), s.tables.begin(), s.tables.end());
    return tables;
}

} // namespace inferscope::compute::experiments
