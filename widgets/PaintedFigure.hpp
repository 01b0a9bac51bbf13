#pragma once
// A figure a panel draws itself with QPainter where Qt Charts has no fitting series (a Gantt
// timeline, a block map). It takes the chart's place in the panel (ChartPanel::setFigure), so
// exports, the presentation scale and the theme reach it as they reach a chart. This base
// draws the title at the top and a legend that wraps to the width at the bottom; a subclass
// paints the plot in between. Colours and patterns are chosen to survive a black-and-white
// print: what a hue tells, a pattern or a written number tells too.
#include <QBrush>
#include <QColor>
#include <QFont>
#include <QPen>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

namespace inferscope::widgets {

class ChartPanel;

class PaintedFigure : public QWidget {
    Q_OBJECT
public:
    struct LegendEntry {
        QString text;
        QBrush fill;    // the swatch's fill (NoBrush: blank)
        QBrush pattern; // drawn over the fill (NoBrush: none)
    };

    explicit PaintedFigure(ChartPanel* panel);
    void setLegend(std::vector<LegendEntry> entries);
    const std::vector<LegendEntry>& legend() const { return legend_; }

    // The texts the last paint had to cut to fit their room (FigureTextCheck reads them).
    const QStringList& textsCutInLastPaint() const { return cut_; }
    QString title() const; // the panel's chart title

    // Eight fills that differ in hue and in grey level (Okabe-Ito, one more grey-blue).
    static const std::vector<QColor>& palette();
    // Black or white, whichever reads better on `fill`.
    static QColor textOn(const QColor& fill);

protected:
    // Paints the plot inside area; returns where it ended (the legend follows it).
    virtual double paintPlot(QPainter& painter, const QRectF& area) = 0;
    void paintEvent(QPaintEvent* event) override;

    // `text` elided to `width`; a cut text is recorded for textsCutInLastPaint().
    QString fitted(const QFontMetricsF& metrics, const QString& text, double width) const;
    // The application's font at the panel's presentation scale, times factor.
    QFont scaledFont(double factor, bool bold = false) const;
    bool dark() const;
    QColor textColour() const;
    QColor backgroundColour() const;
    QColor gridColour() const;
    // Fill, then the pattern over it: diagonal lines (BDiagPattern rising, FDiagPattern
    // falling, DiagCrossPattern both) or dots (any other pattern), drawn as lines and points
    // in the pattern's colour, spaced by the presentation scale, so they survive SVG (which
    // has no Qt brush patterns) and a black-and-white print.
    void fillRect(QPainter& painter, const QRectF& rect, const QBrush& fill,
                  const QBrush& pattern) const;

private:
    mutable QStringList cut_;
    // The legend's height at this width (rows of swatch + text, wrapped).
    double legendHeight(double width) const;
    void paintLegend(QPainter& painter, const QRectF& area) const;

    ChartPanel* panel_;
    std::vector<LegendEntry> legend_;
};

} // namespace inferscope::widgets
