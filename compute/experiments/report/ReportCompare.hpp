#pragma once
// Two class reports side by side: their embedded tables (ReportHtml's JSON block) matched by
// section and table id, then cell by cell (rows by their first column where it is text, else
// by position); numbers as old, new, new - old and the relative change, text as changed or
// not; tables, rows and columns only one report has are listed as such.
#include "compute/Table.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct ReportComparison {
    Table cells;   // "report-compare": section, table, row, column, old, new, delta, change %
    Table summary; // "report-compare-summary": provenance differences and counts
    std::size_t changedCells = 0, equalCells = 0;
};

// old and new: the JSON blocks (extractReportJson). Throws std::invalid_argument for data that
// is not a report.
ReportComparison compareReports(const nlohmann::json& oldReport, const nlohmann::json& newReport);

} // namespace inferscope::compute::experiments
