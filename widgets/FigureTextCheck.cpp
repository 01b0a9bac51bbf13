#include "widgets/FigureTextCheck.hpp"

#include "widgets/PaintedFigure.hpp"

#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QWidget>

namespace inferscope::widgets {

namespace {
// Qt Charts cuts what does not fit to this (ChartPresenter::truncatedText).
const QString kChartsEllipsis = QStringLiteral("...");

void checkChart(const QChartView& view, QStringList& cut) {
    const QChart* chart = view.chart();
    if (!chart || !view.scene()) return;
    const QString figure = chart->title().isEmpty() ? view.objectName() : chart->title();
    // Text may reach the chart's margins but not past the view.
    const QRectF room =
        view.mapToScene(view.viewport()->rect()).boundingRect().adjusted(-1, -1, 1, 1);
    for (const QGraphicsItem* item : view.scene()->items()) {
        if (!item->isVisible()) continue;
        QString text;
        if (const auto* rich = dynamic_cast<const QGraphicsTextItem*>(item))
            text = rich->toPlainText();
        else if (const auto* simple = dynamic_cast<const QGraphicsSimpleTextItem*>(item))
            text = simple->text();
        else
            continue;
        if (text.trimmed().isEmpty()) continue;
        if (text.endsWith(kChartsEllipsis) || text.endsWith(QChar(0x2026)))
            cut << figure + ": " + text;
        else if (!room.contains(item->sceneBoundingRect()))
            cut << figure + ": " + text + " (past the edge)";
    }
}
} // namespace

QStringList cutFigureTexts(const QWidget& root) {
    QStringList cut;
    for (const auto* view : root.findChildren<QChartView*>())
        if (view->isVisible()) checkChart(*view, cut);
    for (const auto* figure : root.findChildren<PaintedFigure*>())
        if (figure->isVisible())
            for (const auto& text : figure->textsCutInLastPaint())
                cut << figure->title() + ": " + text;
    return cut;
}

} // namespace inferscope::widgets
