#include "widgets/ChartPanel.hpp"

#include "models/tokenizer/PrintableBytes.hpp"
#include "widgets/ChartPanelParts.hpp"

#include <QApplication>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QHorizontalBarSeries>
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

ChartPanel::ChartPanel(QString id, QString title, QString explanation, QWidget* parent)
    : QWidget(parent), id_(std::move(id)), title_(std::move(title)),
      explanation_(std::move(explanation)), chart_(std::make_unique<Chart>()) {
    setObjectName(id_);
    setToolTip(explanation_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto chart = std::make_unique<QChart>();
    chart_->chart = chart.get();
    chart_->view = new QChartView(chart.release(), this); // the view owns the chart
    chart_->view->setRenderHint(QPainter::Antialiasing);
    chart_->view->setMinimumSize(320, 220);
    chart_->chart->setAnimationOptions(QChart::NoAnimation); // live data: no tweening
    chart_->chart->setTitle(title_);
    chart_->chart->legend()->hide(); // refreshLegend() draws it under the chart
    layout->addWidget(chart_->view, 1);
    legend_ = new QLabel(this);
    legend_->setObjectName("legend");
    legend_->setTextFormat(Qt::RichText);
    legend_->setWordWrap(true);
    legend_->setContentsMargins(8, 2, 8, 6);
    legend_->hide();
    layout->addWidget(legend_);
    hint_ = new QLabel(chart_->view);
    hint_->setObjectName("emptyHint");
    hint_->setAlignment(Qt::AlignCenter);
    hint_->setWordWrap(true);
    hint_->setAutoFillBackground(true);
    hint_->setMargin(24);
    hint_->hide();
    chart_->view->installEventFilter(this);

    summary_ = new QLabel(this);
    summary_->setObjectName("summary");
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setWordWrap(true);
    summary_->hide();
    layout->addWidget(summary_);
    caption_ = new QLabel(explanation_, this);
    caption_->setObjectName("caption");
    caption_->setWordWrap(true);
    layout->addWidget(caption_);
    notesArea_ = new QScrollArea(this);
    notesArea_->setObjectName("notesArea");
    notesArea_->setFrameShape(QFrame::NoFrame);
    notesArea_->setWidgetResizable(true);
    notesArea_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    notes_ = new QLabel;
    notes_->setObjectName("notes");
    notes_->setWordWrap(true);
    notes_->setTextFormat(Qt::PlainText);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    notesArea_->setWidget(notes_);
    notesArea_->hide();
    layout->addWidget(notesArea_);
    extras_ = new QVBoxLayout;
    layout->addLayout(extras_);

    dark_ = isDarkPalette(palette());
    applyTheme();
    applyFonts();
}

ChartPanel::~ChartPanel() = default;

int ChartPanel::addSeries(const QString& name, SeriesKind kind) {
    Chart::Series entry;
    entry.name = name;
    entry.kind = kind;
    switch (kind) {
    case SeriesKind::Line:
    case SeriesKind::DashedLine: {
        auto* line = new QLineSeries(chart_->chart);
        entry.series = entry.xy = line;
        break;
    }
    case SeriesKind::Scatter: {
        auto* scatter = new QScatterSeries(chart_->chart);
        scatter->setMarkerSize(10);
        entry.series = entry.xy = scatter;
        break;
    }
    case SeriesKind::Area: {
        auto* area = new QAreaSeries(chart_->chart);
        auto* upper = new QLineSeries(area);
        area->setUpperSeries(upper);
        entry.series = area;
        entry.xy = upper;
        break;
    }
    case SeriesKind::Bars: {
        QAbstractBarSeries* bars =
            chart_->horizontalBars
                ? static_cast<QAbstractBarSeries*>(new QHorizontalBarSeries(chart_->chart))
                : new QBarSeries(chart_->chart);
        entry.bars = new QBarSet(name, bars);
        bars->append(entry.bars);
        entry.series = bars;
        break;
    }
    }
    if (entry.xy) entry.xy->setUseOpenGL(false); // GL series vanish from SVG, crash offscreen
    entry.series->setName(name);
    chart_->chart->addSeries(entry.series);
    chart_->attach(entry.series);
    chart_->series.push_back(entry);
    applyTheme();
    return static_cast<int>(chart_->series.size()) - 1;
}

void ChartPanel::setAxis(Qt::Orientation orientation, const QString& title, AxisScale scale) {
    auto& axis = chart_->axis(orientation);
    if (axis.axis) {
        for (auto& s : chart_->series) s.series->detachAxis(axis.axis);
        chart_->chart->removeAxis(axis.axis);
        axis.axis->deleteLater(); // removeAxis hands ownership back
        axis.axis = nullptr;
    }
    switch (scale) {
    case AxisScale::Linear: {
        auto* value = new QValueAxis(chart_->chart);
        value->setLabelFormat("%g"); // token counts read 4, not 4.0
        axis.axis = value;
        break;
    }
    case AxisScale::Log: {
        auto* log = new QLogValueAxis(chart_->chart);
        log->setBase(10);
        log->setLabelFormat("%g");
        log->setMinorTickCount(-1);
        axis.axis = log;
        break;
    }
    case AxisScale::Category:
        axis.axis = new QBarCategoryAxis(chart_->chart);
        break;
    }
    axis.scale = scale;
    axis.title = title;
    axis.min = axis.max = std::numeric_limits<double>::quiet_NaN();
    axis.axis->setTitleText(title);
    // With bars across, the category axis (Horizontal in this interface) is drawn on the left.
    const bool drawnAcross = (orientation == Qt::Horizontal) != chart_->horizontalBars;
    chart_->chart->addAxis(axis.axis, drawnAcross ? Qt::AlignBottom : Qt::AlignLeft);
    for (auto& s : chart_->series) s.series->attachAxis(axis.axis);
    applyTheme();
    applyFonts();
    updateAxisRanges();
    for (std::size_t i = 0; i < chart_->series.size(); ++i) {
        drawSeries(i);
        drawBars(i);
    }
}

void ChartPanel::setSeriesPoints(int series, const QList<QPointF>& points) {
    setSeriesPoints({{series, points}});
}

void ChartPanel::setSeriesPoints(const std::vector<std::pair<int, QList<QPointF>>>& updates) {
    for (const auto& [series, points] : updates)
        chart_->series.at(static_cast<std::size_t>(series)).points = points;
    scheduleNotes();
    if (deferDrawing()) return;
    if (updateAxisRanges()) { // the log axes' lower ends moved: so do the clamped points
        for (std::size_t i = 0; i < chart_->series.size(); ++i) drawSeries(i);
    } else {
        for (const auto& update : updates) drawSeries(static_cast<std::size_t>(update.first));
    }
    updateHint();
}

void ChartPanel::drawSeries(std::size_t index) {
    auto& entry = chart_->series[index];
    if (!entry.xy) return;
    QList<QPointF> drawn = entry.points;
    const bool logX = chart_->x.scale == AxisScale::Log, logY = chart_->y.scale == AxisScale::Log;
    if (logX || logY) {
        const double floorX = logX ? chart_->x.min : 0, floorY = logY ? chart_->y.min : 0;
        for (auto& p : drawn) {
            if (logX && !(p.x() > 0)) p.setX(floorX);
            if (logY && !(p.y() > 0)) p.setY(floorY);
        }
    }
    entry.xy->replace(drawn); // one call: point-wise append is quadratic in Qt Charts
}

void ChartPanel::setBarValues(int series, const QStringList& categories,
                              const QList<qreal>& values) {
    auto& entry = chart_->series.at(static_cast<std::size_t>(series));
    if (!entry.bars) return;
    entry.points.clear();
    for (qsizetype i = 0; i < values.size(); ++i)
        entry.points.append(QPointF(double(i), values[i]));
    chart_->categories = categories;
    scheduleNotes();
    if (deferDrawing()) return;
    drawCategories();
    updateAxisRanges();
    for (std::size_t i = 0; i < chart_->series.size(); ++i) drawBars(i);
    updateHint();
}

void ChartPanel::drawCategories() {
    auto* axis = qobject_cast<QBarCategoryAxis*>(chart_->x.axis);
    if (!axis) return;
    axis->clear();
    QStringList drawn = chart_->categories;
    if (chart_->horizontalBars) std::reverse(drawn.begin(), drawn.end()); // first at the top
    axis->append(drawn);
    // Many names side by side get cut to "int4..."; slanted, each has more room.
    axis->setLabelsAngle(!chart_->horizontalBars && chart_->categories.size() > 5 ? -45 : 0);
    fitChartMinimum();
}

bool ChartPanel::deferDrawing() {
    if (isVisible()) return false;
    drawingPending_ = true;
    updateHint();
    return true;
}

void ChartPanel::drawPending() const {
    if (!drawingPending_) return;
    drawingPending_ = false;
    // Drawing changes the chart, not what the panel shows: a read of it may ask for it.
    auto& self = const_cast<ChartPanel&>(*this);
    self.drawCategories();
    self.updateAxisRanges();
    for (std::size_t i = 0; i < chart_->series.size(); ++i) {
        self.drawSeries(i);
        self.drawBars(i);
    }
}

void ChartPanel::scheduleNotes() {
    notesPending_ = true;
    if (notesQueued_ || !isVisible()) return;
    notesQueued_ = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            notesQueued_ = false;
            refreshNotes();
        },
        Qt::QueuedConnection);
}

void ChartPanel::refreshNotes() const {
    if (!notesPending_) return;
    notesPending_ = false;
    const QString text = tableNotes(dataTables());
    notes_->setText(text);
    notesArea_->setVisible(!text.isEmpty());
}

QString ChartPanel::tableNotes(const std::vector<compute::Table>& tables) {
    QStringList lines;
    for (const auto& table : tables)
        for (const auto& note : table.notes) {
            const QString line = QString::fromStdString(models::printableText(note));
            if (!lines.contains(line)) lines << line; // a note two tables share, once
        }
    return lines.join('\n');
}

QString ChartPanel::notesText() const {
    refreshNotes();
    return notes_->text();
}

QWidget* ChartPanel::notesWidget() const {
    refreshNotes();
    return notes_;
}

void ChartPanel::showEvent(QShowEvent* event) {
    drawPending();
    refreshNotes();
    QWidget::showEvent(event);
}

void ChartPanel::drawBars(std::size_t index) {
    auto& entry = chart_->series[index];
    if (!entry.bars) return;
    // On a log axis a bar <= 0 would make Qt Charts drop the series: it sits on the lower end.
    const bool log = chart_->y.scale == AxisScale::Log;
    QList<qreal> drawn;
    for (const auto& p : entry.points) drawn.append(log && !(p.y() > 0) ? chart_->y.min : p.y());
    if (chart_->horizontalBars) std::reverse(drawn.begin(), drawn.end()); // as the categories
    entry.bars->remove(0, entry.bars->count());
    entry.bars->append(drawn);
}

void ChartPanel::setHorizontalBars() {
    chart_->horizontalBars = true;
}

void ChartPanel::setMarkerSize(int series, double size) {
    if (auto* scatter =
            qobject_cast<QScatterSeries*>(chart_->series.at(std::size_t(series)).series))
        scatter->setMarkerSize(size);
}

void ChartPanel::setSeriesColour(int series, const QColor& colour) {
    chart_->series.at(std::size_t(series)).colour = colour;
    applyTheme();
}

void ChartPanel::setSquareMarkers(int series) {
    if (auto* scatter =
            qobject_cast<QScatterSeries*>(chart_->series.at(std::size_t(series)).series))
        scatter->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
}

void ChartPanel::setEmptyHint(const QString& text) {
    emptyHint_ = text;
    hint_->setText(text);
    updateHint();
}

bool ChartPanel::hasData() const {
    return figureHasData_ ||
           std::any_of(chart_->series.begin(), chart_->series.end(),
                       [](const Chart::Series& s) { return !s.points.isEmpty(); });
}

void ChartPanel::updateHint() {
    const bool show = !emptyHint_.isEmpty() && !hasData();
    if (show) hint_->setGeometry(figure_ ? figure_->rect() : chart_->view->rect());
    hint_->setVisible(show);
    if (show) hint_->raise();
    legend_->setVisible(!legend_->text().isEmpty() && hasData()); // no key to an empty chart
}

bool ChartPanel::eventFilter(QObject* watched, QEvent* event) {
    if ((watched == chart_->view || watched == figure_) && event->type() == QEvent::Resize)
        hint_->setGeometry(static_cast<QWidget*>(watched)->rect());
    return QWidget::eventFilter(watched, event);
}

bool ChartPanel::updateAxisRanges() {
    auto update = [&](Chart::Axis& axis, bool horizontal) {
        if (!axis.axis || axis.scale == AxisScale::Category) return false;
        const bool log = axis.scale == AxisScale::Log;
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const auto& s : chart_->series)
            for (const auto& p : s.points) {
                double v = horizontal ? p.x() : p.y();
                if (!std::isfinite(v) || (log && v <= 0))
                    continue; // clamped values follow the range
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        if (log) {
            if (!std::isfinite(lo)) lo = 1, hi = 10;
            // Bars grow from the lower end: a decade of room keeps the smallest one visible.
            const bool bars =
                !horizontal && std::any_of(chart_->series.begin(), chart_->series.end(),
                                           [](const auto& s) { return s.bars; });
            if (bars) lo /= 10;
            lo = std::pow(10.0, std::floor(std::log10(std::max(lo, kLogFloor))));
            hi = std::pow(10.0, std::ceil(std::log10(std::max(hi, kLogFloor))));
            if (hi <= lo) hi = lo * 10;
        } else {
            if (!std::isfinite(lo)) lo = 0, hi = 1;
            if (!horizontal) lo = std::min(lo, 0.0); // bars, bytes, times: start at zero
            if (hi <= lo) hi = lo + 1;
            if (!horizontal) hi *= 1.05;
        }
        if (!log) { // nice numbers, as applyNiceNumbers() would, without touching the axis
            double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 5)));
            for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0})
                if ((hi - lo) / (step * factor) <= 6) {
                    step *= factor;
                    break;
                }
            lo = std::floor(lo / step) * step;
            hi = std::ceil(hi / step) * step;
            auto* value = static_cast<QValueAxis*>(axis.axis);
            // A marker on the first or last tick would sit half under the axis: with markers
            // on the chart, the x range gets half a step of room at both ends, ticks stay put.
            const bool markers =
                horizontal &&
                std::any_of(chart_->series.begin(), chart_->series.end(), [](const auto& s) {
                    return s.kind == SeriesKind::Scatter && !s.points.isEmpty();
                });
            if (markers) {
                value->setTickType(QValueAxis::TicksDynamic);
                value->setTickAnchor(lo);
                value->setTickInterval(step);
                lo -= step / 2;
                hi += step / 2;
            } else {
                value->setTickType(QValueAxis::TicksFixed);
                value->setTickCount(int(std::lround((hi - lo) / step)) + 1);
            }
        }
        if (lo == axis.min && hi == axis.max) return false; // no relayout for an unchanged range
        axis.axis->setRange(lo, hi);
        axis.min = lo;
        axis.max = hi;
        return true;
    };
    bool x = update(chart_->x, true);
    bool y = update(chart_->y, false);
    return x || y;
}

void ChartPanel::setSummary(const QString& text) {
    scheduleNotes();
    summary_->setText(text);
    summary_->setVisible(!text.isEmpty());
}

int ChartPanel::seriesCount() const {
    return static_cast<int>(chart_->series.size());
}
QString ChartPanel::seriesName(int series) const {
    return chart_->series.at(static_cast<std::size_t>(series)).name;
}
QPair<double, double> ChartPanel::axisRange(Qt::Orientation orientation) const {
    drawPending();
    const auto& axis = chart_->axis(orientation);
    return {axis.min, axis.max};
}
QList<QPointF> ChartPanel::seriesPoints(int series) const {
    drawPending();
    const auto& entry = chart_->series.at(static_cast<std::size_t>(series));
    if (entry.xy) return entry.xy->points(); // what the chart holds, not our copy
    return entry.points;
}
QStringList ChartPanel::barCategories() const {
    return chart_->categories;
}
QString ChartPanel::axisTitle(Qt::Orientation orientation) const {
    return chart_->axis(orientation).title;
}
AxisScale ChartPanel::axisScale(Qt::Orientation orientation) const {
    return chart_->axis(orientation).scale;
}
QString ChartPanel::summaryText() const {
    return summary_->text();
}
QWidget* ChartPanel::chartWidget() const {
    drawPending(); // an export draws what it grabs
    return figure_ ? figure_ : chart_->view;
}
QWidget* ChartPanel::legendWidget() const {
    return legend_;
}
QWidget* ChartPanel::summaryWidget() const {
    return summary_;
}
QWidget* ChartPanel::captionWidget() const {
    return caption_;
}

} // namespace inferscope::widgets
