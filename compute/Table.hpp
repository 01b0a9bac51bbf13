#pragma once
// A Table is what every experiment returns: a title, named columns with units, typed rows
// and notes. Panels draw it, the CLI prints it (text or JSON), tests assert on it.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace inferscope::compute {

using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct Column {
    std::string name;
    std::string unit;  // "", "bytes", "ms", "tokens/s", ...
    int precision = 3; // digits after the point for doubles; < 0: shortest (%g)
};

struct Table {
    std::string id;    // stable machine name, e.g. "model-info"
    std::string title; // human title
    std::vector<Column> columns;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> notes;

    Table& addColumn(std::string name, std::string unit = "", int precision = 3);
    Table& addRow(std::vector<Cell> cells);                 // must match the column count
    std::size_t columnIndex(const std::string& name) const; // throws std::out_of_range
    const Cell& at(std::size_t row, const std::string& column) const;
    double number(std::size_t row, const std::string& column) const; // int or double cell
};

// The table with this id among several (an experiment's result); nullptr when none.
const Table* findTable(const std::vector<Table>& tables, std::string_view id);

std::string formatCell(const Cell& cell, const Column& column);
// Aligned plain-text rendering: title, header with units, rows, notes.
std::string renderText(const Table& table);
nlohmann::json toJson(const Table& table);
// RFC 4180 CSV: a header of "name (unit)", one line per row, CRLF line ends, fields quoted only
// where they must be, numbers at full precision (the shortest text that reads back the same).
std::string renderCsv(const Table& table);
// Formats 23040 as "23,040" (thousands separators, as the chapter prints numbers).
std::string groupThousands(std::int64_t value);
std::string humanBytes(double bytes); // "92.4 MiB"
// value with `digits` digits after the point ("%.*f"), for the figures in notes and captions.
std::string fixed(double value, int digits);

} // namespace inferscope::compute
