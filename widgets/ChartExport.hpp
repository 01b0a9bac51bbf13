#pragma once
// Every way a panel leaves the program, in one place: PNG (the figure at one report size,
// device pixels), SVG (vector, with title and description), CSV and JSON of the panel's tables.
#include "compute/Table.hpp"

#include <QSize>
#include <QString>
#include <QStringList>

class QDir;

namespace inferscope::widgets {

class ChartPanel;

namespace ChartExport {

// The chart's size in every exported figure (PNG and SVG), in pixels at device ratio 1, with
// its text at presentation scale 1.5: one size made for a report page, whatever the window's.
// A chart that needs more (bars for many categories) grows; the labels under it take its width.
QSize reportChartSize();

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
