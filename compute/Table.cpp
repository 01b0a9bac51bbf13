#include "compute/Table.hpp"

#include "models/tokenizer/PrintableBytes.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace inferscope::compute {

Table& Table::addColumn(std::string name, std::string unit, int precision) {
    columns.push_back({std::move(name), std::move(unit), precision});
    return *this;
}

Table& Table::addRow(std::vector<Cell> cells) {
    if (cells.size() != columns.size())
        throw std::invalid_argument("Table " + id + ": row has " + std::to_string(cells.size()) +
                                    " cells for " + std::to_string(columns.size()) + " columns");
    rows.push_back(std::move(cells));
    return *this;
}

std::size_t Table::columnIndex(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
        if (columns[i].name == name) return i;
    throw std::out_of_range("Table " + id + " has no column '" + name + "'");
}

const Cell& Table::at(std::size_t row, const std::string& column) const {
    return rows.at(row).at(columnIndex(column));
}

double Table::number(std::size_t row, const std::string& column) const {
    const Cell& cell = at(row, column);
    if (auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&cell)) return *d;
    throw std::invalid_argument("Table " + id + ": cell '" + column + "' is not a number");
}

std::string groupThousands(std::int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return value < 0 ? "-" + out : out;
}

std::string humanBytes(double bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (std::fabs(bytes) >= 1024.0 && unit < 4) {
        bytes /= 1024.0;
        ++unit;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
    return buffer;
}

const Table* findTable(const std::vector<Table>& tables, std::string_view id) {
    for (const auto& table : tables)
        if (table.id == id) return &table;
    return nullptr;
}

std::string formatCell(const Cell& cell, const Column& column) {
    return std::visit(
        [&](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>)
                return "-";
            else if constexpr (std::is_same_v<T, std::int64_t>)
                return groupThousands(v);
            else if constexpr (std::is_same_v<T, double>) {
                if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
                char buffer[64];
                if (column.precision < 0)
                    std::snprintf(buffer, sizeof buffer, "%g", v);
                else
                    std::snprintf(buffer, sizeof buffer, "%.*f", column.precision, v);
                return buffer;
            } else
                // Text may come from a file (a model's name, a token, a preset's name): its
                // control characters are escaped, in the terminal and in the window alike.
                return models::printableText(v);
        },
        cell);
}

namespace {
std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string rawCell(const Cell& cell) {
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&cell)) {
        char buffer[32];
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, *d).ptr;
        return std::string(buffer, end);
    }
    if (const auto* text = std::get_if<std::string>(&cell)) return *text;
    return {};
}
} // namespace

std::string renderCsv(const Table& table) {
    std::string csv;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        const auto& column = table.columns[c];
        csv += (c ? "," : "") +
               csvField(column.name + (column.unit.empty() ? "" : " (" + column.unit + ")"));
    }
    csv += "\r\n";
    for (const auto& row : table.rows) {
        for (std::size_t c = 0; c < row.size(); ++c)
            csv += (c ? "," : "") + csvField(rawCell(row[c]));
        csv += "\r\n";
    }
    return csv;
}

std::string renderText(const Table& table) {
    std::vector<std::string> header;
    for (const auto& c : table.columns)
        header.push_back(c.unit.empty() ? c.name : c.name + " (" + c.unit + ")");
    std::vector<std::size_t> width(header.size());
    for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : table.rows) {
        std::vector<std::string> line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            line.push_back(formatCell(row[i], table.columns[i]));
            width[i] = std::max(width[i], line.back().size());
        }
        cells.push_back(std::move(line));
    }
    std::ostringstream out;
    if (!table.title.empty()) out << models::printableText(table.title) << "\n";
    auto emit = [&](const std::vector<std::string>& line, bool leftFirst) {
        for (std::size_t i = 0; i < line.size(); ++i) {
            if (i) out << "  ";
            std::size_t pad = width[i] - line[i].size();
            // Text in the first column reads best left-aligned, numbers right-aligned.
            if (i == 0 && leftFirst)
                out << line[i] << std::string(pad, ' ');
            else
                out << std::string(pad, ' ') << line[i];
        }
        out << "\n";
    };
    emit(header, true);
    std::size_t total = 0;
    for (auto w : width) total += w + 2;
    out << std::string(total > 2 ? total - 2 : 0, '-') << "\n";
    for (const auto& line : cells) emit(line, true);
    for (const auto& note : table.notes) out << "  " << models::printableText(note) << "\n";
    return out.str();
}

nlohmann::json toJson(const Table& table) {
    nlohmann::json columns = nlohmann::json::array();
    for (const auto& c : table.columns) columns.push_back({{"name", c.name}, {"unit", c.unit}});
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : table.rows) {
        nlohmann::json r = nlohmann::json::array();
        for (const auto& cell : row)
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::monostate>)
                        r.push_back(nullptr);
                    else
                        r.push_back(v);
                },
                cell);
        rows.push_back(std::move(r));
    }
    return {{"id", table.id},
            {"title", table.title},
            {"columns", columns},
            {"rows", rows},
            {"notes", table.notes}};
}

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

} // namespace inferscope::compute
