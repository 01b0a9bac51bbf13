#include "widgets/ReportPdf.hpp"

#include "compute/experiments/report/ReportHtml.hpp"

#include <QFile>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>
#include <QTextDocument>
#include <algorithm>

namespace inferscope::widgets {

namespace ex = compute::experiments;

namespace {

const char* kStyle = "table { border-collapse: collapse; } th, td { border: 1px solid #999; "
                     "padding: 2px; } p.note { font-size: 8pt; } blockquote { font-style: "
                     "italic; }";

class PdfLayout {
public:
    PdfLayout(QPdfWriter& writer, QPainter& painter)
        : writer_(writer), painter_(painter), width_(painter.viewport().width()),
          height_(painter.viewport().height()) {}

    void text(const QString& html) {
        QTextDocument document;
        document.setDefaultStyleSheet(kStyle);
        document.setHtml(html);
        document.setTextWidth(width_);
        const double height = document.size().height();
        if (y_ > 0 && y_ + height > height_) newPage();
        // A block taller than a page goes on over several, a page's height at a time.
        double shown = 0;
        while (true) {
            const double room = height_ - y_;
            painter_.save();
            painter_.translate(0, y_ - shown);
            document.drawContents(&painter_, QRectF(0, shown, width_, room));
            painter_.restore();
            if (height - shown <= room) {
                y_ += height - shown;
                break;
            }
            shown += room;
            newPage();
        }
        y_ += 6;
    }

    void chart(const std::string& svg) {
        QSvgRenderer renderer(QByteArray::fromStdString(svg));
        const QSizeF size = renderer.defaultSize();
        const double scale = std::min(1.0, width_ / size.width());
        const double height = size.height() * scale;
        if (y_ + height > height_) newPage();
        renderer.render(&painter_, QRectF(0, y_, size.width() * scale, height));
        y_ += height + 6;
    }

private:
    void newPage() {
        writer_.newPage();
        y_ = 0;
    }
    QPdfWriter& writer_;
    QPainter& painter_;
    double width_, height_, y_ = 0;
};

QString qs(const std::string& text) {
    return QString::fromStdString(ex::escapeXml(text));
}

} // namespace

bool writeReportPdf(const ex::ClassReport& report, const QString& path, QString* error) {
    const QString temporary = path + ".partial";
    {
        QPdfWriter writer(temporary);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setResolution(96); // one unit a CSS pixel, as the SVG charts are sized
        writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        writer.setTitle(QStringLiteral("InferScope class report"));
        writer.setCreator(QStringLiteral("InferScope"));
        QPainter painter;
        if (!painter.begin(&writer)) {
            if (error) *error = QObject::tr("cannot write %1").arg(temporary);
            return false;
        }
        PdfLayout layout(writer, painter);
        layout.text(QStringLiteral("<h1>InferScope class report</h1><p>Profile <b>%1</b>, %2 s "
                                   "in all. The chapter's figure beside this machine's "
                                   "measurement, item by item.</p>")
                        .arg(qs(report.profile))
                        .arg(QString::number(report.totalSeconds, 'f', 1)) +
                    QString::fromStdString(ex::renderTableHtml(report.provenance)));
        for (const auto& s : report.sections) {
            layout.text(QStringLiteral("<h2>%1. %2</h2><p>From <i>%3</i>:</p><blockquote>%4"
                                       "</blockquote><p>%5</p><p><b>%6:</b> %7</p>")
                            .arg(s.chapter.item)
                            .arg(qs(s.chapter.title), qs(s.chapter.section), qs(s.chapter.quote),
                                 qs(s.chapter.claim), qs(ex::agreementName(s.agreement)),
                                 qs(s.verdict)));
            for (const auto& chart : s.charts) {
                layout.chart(ex::renderSvgChart(chart));
                layout.text(QStringLiteral("<p class=\"note\">%1</p>").arg(qs(chart.caption)));
            }
            for (const auto& table : s.tables)
                layout.text(QString::fromStdString(ex::renderTableHtml(table)));
        }
        painter.end();
    }
    QFile::remove(path);
    if (!QFile::rename(temporary, path)) {
        QFile::remove(temporary);
        if (error) *error = QObject::tr("cannot move the PDF to %1").arg(path);
        return false;
    }
    return true;
}

} // namespace inferscope::widgets
