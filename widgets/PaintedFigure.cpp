// The painted figure, and ChartPanel's side of it (the figure in the chart's place).
#include "widgets/PaintedFigure.hpp"

#include "widgets/ChartPanelParts.hpp"

#include <QApplication>
#include <QChartView>
#include <QFontMetricsF>
#include <QLabel>
#include <QLayout>
#include <QPaintEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace inferscope::widgets {

namespace {
constexpr double kMargin = 8;
}

PaintedFigure::PaintedFigure(ChartPanel* panel) : QWidget(panel), panel_(panel) {
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void PaintedFigure::setLegend(std::vector<LegendEntry> entries) {
    legend_ = std::move(entries);
    update();
}

const std::vector<QColor>& PaintedFigure::palette() {
    static const std::vector<QColor> colours = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00),
                                                QColor(0x00, 0x9E, 0x73), QColor(0xCC, 0x79, 0xA7),
                                                QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                                                QColor(0xF0, 0xE4, 0x42), QColor(0x6A, 0x5A, 0x8C)};
    return colours;
}

QColor PaintedFigure::textOn(const QColor& fill) {
    // Relative luminance, roughly: yellow and sky blue take black, blue and purple white.
    const double y = 0.2126 * fill.redF() + 0.7152 * fill.greenF() + 0.0722 * fill.blueF();
    return y > 0.45 ? QColor(Qt::black) : QColor(Qt::white);
}

QFont PaintedFigure::scaledFont(double factor, bool bold) const {
    QFont font = QApplication::font();
    const double points = font.pointSizeF() > 0 ? font.pointSizeF() : 10.0;
    font.setPointSizeF(points * panel_->presentationScale() * factor);
    font.setBold(bold);
    return font;
}

bool PaintedFigure::dark() const {
    return panel_->darkTheme();
}

QColor PaintedFigure::textColour() const {
    return dark() ? QColor(0xEE, 0xEE, 0xEE) : QColor(0x20, 0x20, 0x20);
}

QColor PaintedFigure::backgroundColour() const {
    return dark() ? QColor(0x2E, 0x30, 0x3A) : QColor(Qt::white);
}

QColor PaintedFigure::gridColour() const {
    return dark() ? QColor(0x55, 0x58, 0x66) : QColor(0xD8, 0xD8, 0xD8);
}

void PaintedFigure::fillRect(QPainter& painter, const QRectF& rect, const QBrush& fill,
                             const QBrush& pattern) const {
    if (fill.style() != Qt::NoBrush) painter.fillRect(rect, fill);
    const auto style = pattern.style();
    if (style == Qt::NoBrush || rect.isEmpty()) return;
    if (style == Qt::SolidPattern) {
        painter.fillRect(rect, pattern);
        return;
    }
    const double scale = panel_->presentationScale();
    const double gap = 6.0 * scale;
    painter.save();
    painter.setPen(QPen(pattern.color(), std::max(1.0, std::round(scale * 0.8))));
    const double l = rect.left(), r = rect.right(), t = rect.top(), b = rect.bottom();
    // Each line cut to the rectangle by hand (SVG output has no clipping to lean on), on one
    // lattice for the whole figure, so neighbouring cells' patterns run on alike.
    const auto lattice = [gap](double from) { return std::ceil(from / gap) * gap; };
    if (style == Qt::BDiagPattern || style == Qt::DiagCrossPattern) // x + y = c
        for (double c = lattice(l + t); c < r + b; c += gap) {
            const double x0 = std::max(l, c - b), x1 = std::min(r, c - t);
            if (x1 > x0) painter.drawLine(QPointF(x0, c - x0), QPointF(x1, c - x1));
        }
    if (style == Qt::FDiagPattern || style == Qt::DiagCrossPattern) // y - x = c
        for (double c = lattice(t - r); c < b - l; c += gap) {
            const double x0 = std::max(l, t - c), x1 = std::min(r, b - c);
            if (x1 > x0) painter.drawLine(QPointF(x0, x0 + c), QPointF(x1, x1 + c));
        }
    if (style != Qt::BDiagPattern && style != Qt::FDiagPattern && style != Qt::DiagCrossPattern) {
        const double dot = std::max(1.0, std::round(scale)), step = std::round(gap / 1.5);
        for (double y = std::ceil(t / step) * step + 1; y + dot <= b; y += step)
            for (double x = std::ceil(l / step) * step + 1; x + dot <= r; x += step)
                painter.fillRect(QRectF(x, y, dot, dot), pattern.color());
    }
    painter.restore();
}

double PaintedFigure::legendHeight(double width) const {
    if (legend_.empty()) return 0;
    const QFontMetricsF metrics(scaledFont(1.0));
    const double swatch = metrics.height(), gap = metrics.averageCharWidth() * 2;
    double x = 0;
    int rows = 1;
    for (const auto& entry : legend_) {
        const double w = std::min(width, swatch * 1.5 + metrics.horizontalAdvance(entry.text));
        if (x > 0 && x + w > width) {
            ++rows;
            x = 0;
        }
        x += w + gap;
    }
    return rows * metrics.height() * 1.3;
}

void PaintedFigure::paintLegend(QPainter& painter, const QRectF& area) const {
    const QFont font = scaledFont(1.0);
    const QFontMetricsF metrics(font);
    painter.setFont(font);
    const double swatch = metrics.height(), gap = metrics.averageCharWidth() * 2;
    const double rowHeight = metrics.height() * 1.3;
    double x = 0, y = area.top();
    for (const auto& entry : legend_) {
        const double textWidth =
            std::min(area.width() - swatch * 1.5, metrics.horizontalAdvance(entry.text));
        const double w = swatch * 1.5 + textWidth;
        if (x > 0 && x + w > area.width()) {
            x = 0;
            y += rowHeight;
        }
        const QRectF box(area.left() + x, y + (rowHeight - swatch * 0.8) / 2, swatch, swatch * 0.8);
        fillRect(painter, box, entry.fill, entry.pattern);
        painter.setPen(QPen(textColour(), 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(box);
        const QRectF text(area.left() + x + swatch * 1.5, y, textWidth, rowHeight);
        painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                         fitted(metrics, entry.text, textWidth));
        x += w + gap;
    }
}

QString PaintedFigure::title() const {
    return panel_->title();
}

QString PaintedFigure::fitted(const QFontMetricsF& metrics, const QString& text,
                              double width) const {
    QString shown = metrics.elidedText(text, Qt::ElideRight, width);
    if (shown != text) cut_ << text;
    return shown;
}

void PaintedFigure::paintEvent(QPaintEvent*) {
    cut_.clear();
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, false); // cells meet edge to edge
    painter.fillRect(rect(), backgroundColour());
    QRectF area = QRectF(rect()).adjusted(kMargin, kMargin / 2, -kMargin, -kMargin / 2);
    const QFont title = scaledFont(1.2, true);
    painter.setFont(title);
    painter.setPen(textColour());
    const double titleHeight = QFontMetricsF(title).height() * 1.4;
    painter.drawText(QRectF(area.left(), area.top(), area.width(), titleHeight), Qt::AlignCenter,
                     panel_->title());
    area.setTop(area.top() + titleHeight);
    const double legend = legendHeight(area.width());
    const double bottom = area.bottom();
    area.setBottom(area.bottom() - legend - kMargin);
    painter.setRenderHint(QPainter::TextAntialiasing);
    double end = area.bottom();
    if (area.height() > 0 && area.width() > 0)
        end = std::clamp(paintPlot(painter, area), area.top(), area.bottom());
    // Right under the plot, so a plot that needs less height keeps its legend in reach.
    paintLegend(painter, QRectF(area.left(), std::min(end + kMargin, bottom - legend), area.width(),
                                legend));
}

// ---- ChartPanel's side ------------------------------------------------------------------

void ChartPanel::setFigure(QWidget* figure) {
    figure_ = figure;
    if (auto* replaced = layout()->replaceWidget(chart_->view, figure)) delete replaced;
    chart_->view->hide();
    hint_->setParent(figure);
    figure->installEventFilter(this);
    applyFonts();
    updateHint();
}

void ChartPanel::setFigureHasData(bool hasData) {
    figureHasData_ = hasData;
    if (figure_) figure_->update();
    updateHint();
}

} // namespace inferscope::widgets
