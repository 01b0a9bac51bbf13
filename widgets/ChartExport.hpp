#pragma once
// Every way a panel leaves the program, in one place: PNG (the panel as drawn, device
// pixels), SVG (vector, with title and description), CSV and JSON of the panel's tables.
#include "compute/Table.hpp"

#include <QString>
#include <QStringList>

class QDir;

namespace inferscope::widgets {

class ChartPanel;

namespace ChartExport {

// Each returns an empty string on success, else what went wrong.
QString writePng(ChartPanel& panel, const QString& path);
QString writeSvg(ChartPanel& panel, const QString& path);
// The panel's first table; further tables go to "<stem>-<table id>.csv" beside it.
QString writeCsv(const ChartPanel& panel, const QString& path);
// {"panel", "title", "description", "tables": [compute::toJson(table), ...]}
QString writeJson(const ChartPanel& panel, const QString& path);

// RFC 4180 CSV: a header of "name (unit)" and one line per row, numbers unformatted.
QString toCsv(const compute::Table& table);

// Writes <id>.png, <id>.svg, <id>.csv (and extra tables' CSVs) and <id>.json into folder,
// which is created; returns the files written. On failure error says why.
QStringList exportAll(ChartPanel& panel, const QDir& folder, QString* error = nullptr);

} // namespace ChartExport

} // namespace inferscope::widgets
