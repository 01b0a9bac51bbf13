// ChartPanel's looks: the theme (light or dark, following the palette), the series colours and
// the fonts at the presentation scale.
#include "widgets/ChartPanelParts.hpp"

#include <QApplication>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFontMetrics>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

namespace inferscope::widgets {

void ChartPanel::setPresentationScale(double scale) {
    scale_ = std::clamp(scale, 0.5, 4.0);
    applyFonts();
}

void ChartPanel::setDarkTheme(bool dark) {
    themeFollowsPalette_ = false;
    dark_ = dark;
    applyTheme();
}

void ChartPanel::applyTheme() {
    // The theme resets fonts and series colours, so it goes first and ours follow.
    chart_->chart->setTheme(dark_ ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart_->chart->setBackgroundRoundness(0);
    if (figure_) figure_->update();
    for (std::size_t i = 0; i < chart_->series.size(); ++i) {
        auto& s = chart_->series[i];
        QColor colour =
            s.colour.isValid() ? s.colour : kSeriesColours[i % std::size(kSeriesColours)];
        if (s.xy && s.kind != SeriesKind::Area) {
            // Measured lines solid and wide, formulas dashed and thin on top of them.
            QPen pen(colour, s.kind == SeriesKind::Scatter ? 1.0
                             : s.kind == SeriesKind::Line  ? 3.0
                                                           : 1.5);
            if (s.kind == SeriesKind::DashedLine) pen.setStyle(Qt::DashLine);
            s.xy->setPen(pen);
            if (s.kind == SeriesKind::Scatter) {
                s.xy->setBrush(colour);
                // An outline in the text colour keeps a marker visible on a line of its colour.
                s.xy->setPen(QPen(dark_ ? QColor(Qt::white) : QColor(Qt::black), 1.5));
            }
        } else if (auto* area = qobject_cast<QAreaSeries*>(s.series)) {
            QColor fill = colour;
            fill.setAlpha(150);
            area->setBrush(fill);
            area->setPen(QPen(colour, 1.5));
        } else if (s.bars) {
            s.bars->setColor(colour);
            s.bars->setBorderColor(colour.darker(130));
        }
    }
    refreshLegend();
    applyFonts();
}

void ChartPanel::applyFonts() {
    QFont base = QApplication::font(); // the presentation scale applies once, here
    base.setPointSizeF(base.pointSizeF() > 0 ? base.pointSizeF() : 10.0);
    chart_->chart->setTitleFont(scaledFont(base, scale_ * 1.2, true));
    legend_->setFont(scaledFont(base, scale_));
    for (auto* axis : {chart_->x.axis, chart_->y.axis}) {
        if (!axis) continue;
        axis->setLabelsFont(scaledFont(base, scale_ * 0.9));
        axis->setTitleFont(scaledFont(base, scale_));
    }
    summary_->setFont(scaledFont(base, scale_, true));
    caption_->setFont(scaledFont(base, scale_ * 0.9));
    notes_->setFont(scaledFont(base, scale_ * 0.85));
    notesArea_->setMaximumHeight(3 * QFontMetrics(notes_->font()).lineSpacing() + 4);
    hint_->setFont(scaledFont(base, scale_ * 1.2));
    fitChartMinimum();
}

void ChartPanel::fitChartMinimum() {
    // The chart keeps room for its axis labels when tables and controls share the panel.
    int height = qRound(300 * scale_);
    if (chart_->horizontalBars && chart_->x.axis) {
        // A category's name needs a line and a half of its font to be drawn at all; the
        // title, the value axis and the margins take about eight lines.
        const int rows = int(chart_->categories.size());
        height = std::max(height, (rows * 3 / 2 + 8) *
                                      QFontMetrics(chart_->x.axis->labelsFont()).lineSpacing());
    }
    chart_->view->setMinimumSize(qRound(320 * scale_), height);
    if (figure_) {
        figure_->setMinimumSize(chart_->view->minimumSize());
        figure_->update();
    }
}

void ChartPanel::refreshLegend() {
    QStringList entries;
    // A lone series of bars needs no key: the value axis' title already names it.
    const bool lone = chart_->series.size() == 1 && chart_->series.front().bars;
    for (std::size_t i = 0; i < chart_->series.size(); ++i) {
        const auto& s = chart_->series[i];
        const QColor colour =
            s.colour.isValid() ? s.colour : kSeriesColours[i % std::size(kSeriesColours)];
        // The stroke as drawn: a thick line for a measurement, a dashed one for a formula.
        const char* stroke = s.kind == SeriesKind::Line         ? "\u2501\u2501"
                             : s.kind == SeriesKind::DashedLine ? "\u254d\u254d"
                             : s.kind == SeriesKind::Scatter    ? "\u25cf"
                                                                : "\u25a0";
        entries << QString("<span style=\"color:%1\">%2</span>&nbsp;%3")
                       .arg(colour.name(), QString::fromUtf8(stroke),
                            // A short name stays on one line; a long one may wrap.
                            s.name.size() <= 40 ? s.name.toHtmlEscaped().replace(' ', "&nbsp;")
                                                : s.name.toHtmlEscaped());
    }
    legend_->setText(lone ? QString() : entries.join("&emsp;&emsp; "));
    updateHint();
}

void ChartPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange && themeFollowsPalette_) {
        bool dark = isDarkPalette(palette());
        if (dark != dark_) {
            dark_ = dark;
            applyTheme();
        }
    }
    QWidget::changeEvent(event);
}

bool isDarkPalette(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() <
           palette.color(QPalette::WindowText).lightness();
}

} // namespace inferscope::widgets
