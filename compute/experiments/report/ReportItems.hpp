#pragma once
// The class report's sections, one function per chapter item: each runs its lab(s) through
// Lab::run, keeps their tables, draws its charts from them and writes the verdict from the
// measured numbers. Shared runs (the caching comparison of items 1, 3 and 5; the activation
// recording of items 9 and 10) are kept in ReportRun so they run once.
#include "compute/experiments/quantization/QuantizationLabs.hpp"
#include "compute/experiments/report/ClassReportLab.hpp"
#include "compute/lab/RunRecords.hpp"

#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct ReportRun {
    LabContext& lab;
    const ReportProfile& profile;
    const JobControl& control;
    CachingComparisonPtr caching;
    std::optional<ActivationReportLab::Result> activations;
    bool chat() const { return lab.chatFormat().has_value(); }
};

using ItemComposer = void (*)(ReportSection& section, ReportRun& run);
// Composers for items 1 to 14, in order.
void composeCachedVsUncached(ReportSection& section, ReportRun& run); // 1
void composeMacs(ReportSection& section, ReportRun& run);             // 2
void composePeakMemory(ReportSection& section, ReportRun& run);       // 3
void composePrefillDecode(ReportSection& section, ReportRun& run);    // 4
void composeKvBytes(ReportSection& section, ReportRun& run);          // 5
void composeBatching(ReportSection& section, ReportRun& run);         // 6
void composeScheduling(ReportSection& section, ReportRun& run);       // 7
void composeWeightError(ReportSection& section, ReportRun& run);      // 8
void composeOutliers(ReportSection& section, ReportRun& run);         // 9
void composeLevels(ReportSection& section, ReportRun& run);           // 10
void composeQuality(ReportSection& section, ReportRun& run);          // 11
void composeSpeculative(ReportSection& section, ReportRun& run);      // 12
void composeSoftLabels(ReportSection& section, ReportRun& run);       // 13
void composeBudget(ReportSection& section, ReportRun& run);           // 14

// Helpers over a lab's tables.
const Table& requireTable(const std::vector<Table>& tables, const std::string& id);
// The first row whose `column` holds exactly `text` (or, with contains, holds it somewhere).
std::optional<std::size_t> rowWhere(const Table& table, const std::string& column,
                                    const std::string& text, bool contains = false);
// A number cell, or nullopt for an empty or text cell.
std::optional<double> numberAt(const Table& table, std::size_t row, const std::string& column);
// (x, y) of every row where both are numbers.
ReportSeries seriesOf(const Table& table, const std::string& x, const std::string& y,
                      std::string name);
// "1.23x": a ratio for a sentence.
std::string times(double ratio, int digits = 2);
// Within `tolerance` (relative) of `expected`.
bool near(double measured, double expected, double tolerance);
void appendTables(ReportSection& section, const std::vector<Table>& tables);

} // namespace inferscope::compute::experiments
