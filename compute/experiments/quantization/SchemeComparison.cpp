#include "compute/experiments/quantization/SchemeComparison.hpp"

#include <algorithm>
#include <limits>

namespace inferscope::compute::experiments {

namespace {
constexpr std::size_t kNoRow = std::numeric_limits<std::size_t>::max();
// The row of `scheme` in a table whose first column names schemes, or kNoRow.
std::size_t rowOf(const Table* t, const std::string& scheme) {
    if (!t) return kNoRow;
    for (std::size_t r = 0; r < t->rows.size(); ++r)
        if (auto* s = std::get_if<std::string>(&t->rows[r][0]); s && *s == scheme) return r;
    return kNoRow;
}
// What a quality column counts, as its unit (a header reads "name (unit)"): the battery's
// "correct of 16", agreement's "% of 144 tokens, vs fp32"; other columns keep theirs.
std::string qualityUnit(const Table& quality, const Column& column) {
    if (column.name.rfind("battery", 0) == 0) {
        std::string questions; // the report's note: "battery: 16 questions, ..."
        for (const auto& note : quality.notes)
            if (note.rfind("battery: ", 0) == 0) questions = note.substr(9, note.find(' ', 9) - 9);
        return questions.empty() ? std::string("correct") : "correct of " + questions;
    }
    if (column.name == "agreement") {
        const auto of = std::find_if(quality.columns.begin(), quality.columns.end(),
                                     [](const Column& c) { return c.name == "of"; });
        if (of != quality.columns.end() && !quality.rows.empty()) {
            const auto index = std::size_t(of - quality.columns.begin());
            if (auto* n = std::get_if<std::int64_t>(&quality.rows.front()[index]))
                return "% of " + groupThousands(*n) + " tokens, vs fp32";
        }
        return "%, vs fp32";
    }
    return column.unit;
}
} // namespace

Table schemeComparisonTable(const std::vector<Table>& weightTables,
                            const std::vector<Table>& qualityTables) {
    Table t;
    t.id = "scheme-comparison";
    t.title = "Quantization schemes side by side";
    const auto* errors = findTable(weightTables, "weight-error");
    const auto* quality = findTable(qualityTables, "quality");
    t.addColumn("scheme").addColumn("bits/weight", "", 3);
    if (errors) t.addColumn("mean error", "%", 3).addColumn("worst error", "%", 3);
    std::vector<std::size_t> qualityColumns; // quality's columns after scheme and bits/weight
    if (quality)
        for (std::size_t c = 2; c < quality->columns.size(); ++c) {
            const auto& column = quality->columns[c];
            if (column.name == "agreeing" || column.name == "of") continue;
            t.addColumn(column.name, qualityUnit(*quality, column), column.precision);
            qualityColumns.push_back(c);
        }
    std::vector<std::string> schemes;
    for (const auto* source : {errors, quality})
        if (source)
            for (const auto& row : source->rows)
                if (auto* s = std::get_if<std::string>(&row[0]);
                    s && std::find(schemes.begin(), schemes.end(), *s) == schemes.end())
                    schemes.push_back(*s);
    for (const auto& scheme : schemes) {
        std::vector<Cell> row(2);
        row[0] = scheme;
        const std::size_t errorRow = rowOf(errors, scheme), qualityRow = rowOf(quality, scheme);
        if (errorRow != kNoRow)
            row[1] = errors->rows[errorRow][1];
        else if (qualityRow != kNoRow)
            row[1] = quality->rows[qualityRow][1];
        if (errors) {
            row.emplace_back();
            row.emplace_back();
            if (errorRow != kNoRow) { // as percentages
                row[row.size() - 2] = errors->number(errorRow, "mean error") * 100;
                row[row.size() - 1] = errors->number(errorRow, "worst error") * 100;
            }
        }
        for (auto c : qualityColumns) {
            row.emplace_back();
            if (qualityRow != kNoRow) row.back() = quality->rows[qualityRow][c];
        }
        t.addRow(std::move(row));
    }
    return t;
}

} // namespace inferscope::compute::experiments
