#pragma once
// The class report as PDF, the same content as its HTML (compute/experiments/report): Qt's
// PDF writer, text and tables through QTextDocument, each chart's SVG drawn by QSvgRenderer so
// the charts stay vector graphics. A4 pages; a block that does not fit starts a new page.
#include "compute/experiments/report/ClassReport.hpp"

#include <QString>

namespace inferscope::widgets {

// Writes `path` (through a temporary file renamed at the end); false with `error` set when it
// cannot be written.
bool writeReportPdf(const compute::experiments::ClassReport& report, const QString& path,
                    QString* error);

} // namespace inferscope::widgets
