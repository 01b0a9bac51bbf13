#pragma once
// The class report as one self-contained file: XHTML-compatible HTML (it parses as XML) with
// its styles, inline SVG charts and every table, and all tables again as JSON in a
// <script type="application/json" id="inferscope-report"> block, which a later run reads back
// to compare (ReportCompare). No external resource: it opens offline in any browser.
#include "compute/experiments/report/ClassReport.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace inferscope::compute::experiments {

// Text made safe for element content and attribute values (& < > " '), with bytes that are
// not UTF-8 replaced by U+FFFD.
std::string escapeXml(const std::string& text);
// One chart as an <svg> element: title, axis titles, ticks, a legend; every series has its
// own dash pattern and marker shape as well as its colour, so it reads in black and white.
std::string renderSvgChart(const ReportChart& chart);
std::string renderTableHtml(const Table& table);
// The report's data: {"format": "inferscope-class-report", "version": 1, "profile",
// "provenance": table, "sections": [{"item", "title", "agreement", "verdict", "wall_s",
// "tables": [...]}]}.
nlohmann::json reportJson(const ClassReport& report);
std::string renderReportHtml(const ClassReport& report);
// The JSON block of a report written by renderReportHtml; throws std::invalid_argument
// naming what is missing or malformed.
nlohmann::json extractReportJson(const std::string& html);

} // namespace inferscope::compute::experiments
