#pragma once
// The class report: every chapter item's claim set beside this machine's measurement. A
// section per chapter item holds the chapter's figure (quoted, with the part of the chapter
// it comes from), the tables of the same lab the panel and the CLI run, charts drawn from
// those tables, and a verdict sentence computed from the measured numbers.
#include "compute/Table.hpp"

#include <string>
#include <utility>
#include <vector>

namespace inferscope::compute::experiments {

// One line of a chart; points are (x, y) in the axes' units.
struct ReportSeries {
    std::string name;
    std::vector<std::pair<double, double>> points;
};

struct ReportChart {
    std::string id;
    std::string title;
    std::string xTitle, yTitle; // with units, e.g. "prompt tokens P"
    bool xLog = false, yLog = false;
    std::vector<ReportSeries> series;
    std::string caption; // computed from the run
};

// What the chapter says for one item.
struct ChapterClaim {
    int item = 0;
    std::string title;   // "Cached vs uncached generation"
    std::string section; // where in the chapter ("KV cache: the single attention head")
    std::string quote;   // the chapter's own words (Danish)
    std::string claim;   // the figure in English, with its numbers
};

// Whether this machine's measurement agrees with the chapter's figure.
enum class Agreement { Agrees, Differs, NotMeasured };
const char* agreementName(Agreement agreement); // "agrees", "differs", "not measured"

struct ReportSection {
    ChapterClaim chapter;
    std::vector<std::string> labs; // the experiment functions run for it
    double wallSeconds = 0;
    std::vector<Table> tables;
    std::vector<ReportChart> charts;
    Agreement agreement = Agreement::NotMeasured;
    std::string verdict; // built from the measured numbers
};

struct ClassReport {
    std::string profile;
    Table provenance; // "provenance": property, value
    std::vector<ReportSection> sections;
    double totalSeconds = 0;
};

// The chapter's 14 items, in order (ChapterClaims.cpp).
const std::vector<ChapterClaim>& chapterClaims();

} // namespace inferscope::compute::experiments
