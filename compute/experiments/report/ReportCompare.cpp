#include "compute/experiments/report/ReportCompare.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

using Json = nlohmann::json;

std::string cellText(const Json& cell) {
    if (cell.is_null()) return "";
    if (cell.is_string()) return cell.get<std::string>();
    return cell.dump();
}

// Tables of a report by "item N / table id" (the provenance table as "provenance").
std::map<std::string, Json> tablesOf(const Json& report) {
    if (!report.is_object() || !report.contains("sections") || !report["sections"].is_array())
        throw std::invalid_argument("not a class report's data (no sections)");
    std::map<std::string, Json> tables;
    for (const auto& section : report["sections"])
        for (const auto& table : section.value("tables", Json::array()))
            tables["item " + std::to_string(section.value("item", 0)) + " / " +
                   table.value("id", std::string("?"))] = table;
    return tables;
}

// Row keys: the first cell when every row's first cell is distinct text, else the position.
std::vector<std::string> rowKeys(const Json& table) {
    std::vector<std::string> keys;
    std::map<std::string, int> seen;
    bool textual = true;
    for (const auto& row : table.value("rows", Json::array())) {
        const bool text = !row.empty() && row[0].is_string();
        const std::string key = text ? row[0].get<std::string>() : "";
        textual &= text && seen[key]++ == 0;
        keys.push_back(key);
    }
    if (!textual)
        for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = "row " + std::to_string(i + 1);
    return keys;
}

std::vector<std::string> columnNames(const Json& table) {
    std::vector<std::string> names;
    for (const auto& c : table.value("columns", Json::array())) {
        std::string name = c.value("name", std::string());
        const std::string unit = c.value("unit", std::string());
        names.push_back(unit.empty() ? name : name + " (" + unit + ")");
    }
    return names;
}

} // namespace

ReportComparison compareReports(const Json& oldReport, const Json& newReport) {
    ReportComparison result;
    Table& cells = result.cells;
    cells.id = "report-compare";
    cells.title = "Cells that differ between the two reports";
    cells.addColumn("table").addColumn("row").addColumn("column").addColumn("old").addColumn("new");
    cells.addColumn("delta", "", -1).addColumn("change", "%", 1);
    Table& summary = result.summary;
    summary.id = "report-compare-summary";
    summary.title = "What differs between the two reports";
    summary.addColumn("what").addColumn("old").addColumn("new");

    // Provenance: every property whose value differs.
    const auto oldProvenance = oldReport.value("provenance", Json::object());
    const auto newProvenance = newReport.value("provenance", Json::object());
    std::map<std::string, std::pair<std::string, std::string>> properties;
    for (const auto& row : oldProvenance.value("rows", Json::array()))
        if (row.size() == 2) properties[cellText(row[0])].first = cellText(row[1]);
    for (const auto& row : newProvenance.value("rows", Json::array()))
        if (row.size() == 2) properties[cellText(row[0])].second = cellText(row[1]);
    for (const auto& [name, values] : properties)
        if (values.first != values.second)
            summary.addRow({"provenance: " + name, values.first, values.second});

    const auto oldTables = tablesOf(oldReport), newTables = tablesOf(newReport);
    for (const auto& [key, oldTable] : oldTables) {
        const auto found = newTables.find(key);
        if (found == newTables.end()) {
            summary.addRow({"table " + key, std::string("present"), std::string("missing")});
            continue;
        }
        const Json& newTable = found->second;
        const auto oldColumns = columnNames(oldTable), newColumns = columnNames(newTable);
        const auto oldKeys = rowKeys(oldTable), newKeys = rowKeys(newTable);
        std::map<std::string, std::size_t> newRowAt, newColumnAt;
        for (std::size_t i = 0; i < newKeys.size(); ++i) newRowAt.emplace(newKeys[i], i);
        for (std::size_t i = 0; i < newColumns.size(); ++i) newColumnAt.emplace(newColumns[i], i);
        for (const auto& column : oldColumns)
            if (!newColumnAt.count(column))
                summary.addRow({"column " + key + " / " + column, std::string("present"),
                                std::string("missing")});
        for (std::size_t r = 0; r < oldKeys.size(); ++r) {
            const auto newRow = newRowAt.find(oldKeys[r]);
            if (newRow == newRowAt.end()) {
                summary.addRow({"row " + key + " / " + oldKeys[r], std::string("present"),
                                std::string("missing")});
                continue;
            }
            const Json& a = oldTable["rows"][r];
            const Json& b = newTable["rows"][newRow->second];
            for (std::size_t c = 0; c < oldColumns.size() && c < a.size(); ++c) {
                const auto nc = newColumnAt.find(oldColumns[c]);
                if (nc == newColumnAt.end() || nc->second >= b.size()) continue;
                const Json& x = a[c];
                const Json& y = b[nc->second];
                if (x == y) {
                    ++result.equalCells;
                    continue;
                }
                ++result.changedCells;
                Cell delta, change;
                if (x.is_number() && y.is_number()) {
                    const double dx = x.get<double>(), dy = y.get<double>();
                    delta = dy - dx;
                    if (dx != 0) change = 100.0 * (dy - dx) / std::fabs(dx);
                }
                cells.addRow(
                    {key, oldKeys[r], oldColumns[c], cellText(x), cellText(y), delta, change});
            }
        }
        for (const auto& k : newKeys)
            if (std::find(oldKeys.begin(), oldKeys.end(), k) == oldKeys.end())
                summary.addRow(
                    {"row " + key + " / " + k, std::string("missing"), std::string("present")});
    }
    for (const auto& [key, table] : newTables)
        if (!oldTables.count(key))
            summary.addRow({"table " + key, std::string("missing"), std::string("present")});
    summary.addRow({std::string("cells compared"), std::string(),
                    std::to_string(result.changedCells + result.equalCells)});
    summary.addRow(
        {std::string("cells that differ"), std::string(), std::to_string(result.changedCells)});
    return result;
}

} // namespace inferscope::compute::experiments
