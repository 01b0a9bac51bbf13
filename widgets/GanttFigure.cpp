#include "widgets/GanttFigure.hpp"

#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>
#include <set>
#include <tuple>

namespace inferscope::widgets {

namespace {
const QColor kPaddingFill(0xD4, 0xD4, 0xD4);
const QColor kPaddingHatch(0x40, 0x40, 0x40);

QString groupHeader(const GanttFigure::Group& group, int steps) {
    const QString lead = group.policy == QLatin1String("static")
                             ? GanttFigure::tr("static: a group holds its slots until its "
                                               "longest is done")
                         : group.policy == QLatin1String("continuous")
                             ? GanttFigure::tr("continuous: a freed slot takes the next "
                                               "request")
                             : group.policy;
    return GanttFigure::tr("%1 (%2 steps)").arg(lead).arg(steps);
}
} // namespace

GanttFigure::GanttFigure(ChartPanel* panel) : PaintedFigure(panel) {
    setObjectName("schedulerGantt");
    setLegend({{tr("a request generating (its number in the bar)"), palette()[0], Qt::NoBrush},
               {tr("static padding: done, its slot waits for the group's longest"), kPaddingFill,
                QBrush(kPaddingHatch, Qt::BDiagPattern)},
               {tr("idle slot"), Qt::NoBrush, Qt::NoBrush}});
}

void GanttFigure::clear() {
    groups_.clear();
    bars_.clear();
    colourIndex_.clear();
    steps_ = 0;
    update();
    emit timelineChanged();
}

void GanttFigure::setTimeline(const compute::Table& timeline) {
    clear();
    // (group, slot, request, padding) -> first and last step.
    std::map<std::tuple<int, int, int, bool>, std::pair<int, int>> spans;
    for (std::size_t row = 0; row < timeline.rows.size(); ++row) {
        const auto policy =
            QString::fromStdString(std::get<std::string>(timeline.at(row, "policy")));
        auto group = std::find_if(groups_.begin(), groups_.end(),
                                  [&](const Group& g) { return g.policy == policy; });
        if (group == groups_.end()) group = groups_.insert(groups_.end(), Group{policy, 0});
        const int step = int(timeline.number(row, "step"));
        const int slot = int(timeline.number(row, "slot"));
        group->slotCount = std::max(group->slotCount, slot + 1);
        const bool padding = std::get<std::string>(timeline.at(row, "state")) == "padding";
        const auto key = std::tuple(int(group - groups_.begin()), slot,
                                    int(timeline.number(row, "request")), padding);
        auto [at, fresh] = spans.try_emplace(key, step, step);
        if (!fresh) {
            at->second.first = std::min(at->second.first, step);
            at->second.second = std::max(at->second.second, step);
        }
        steps_ = std::max(steps_, step + 1);
    }
    for (const auto& [key, span] : spans) {
        const auto [group, slot, request, padding] = key;
        bars_.push_back({group, slot, request, span.first, span.second + 1, padding});
    }
    colourRequests();
    update();
    emit timelineChanged();
}

void GanttFigure::colourRequests() {
    // Requests that sit next to each other (one after the other in a slot, or at the same
    // time in neighbouring slots, in any group) get different colours, first free one.
    std::map<int, std::set<int>> neighbours;
    std::vector<const GanttBar*> generating;
    for (const auto& bar : bars_)
        if (!bar.padding) generating.push_back(&bar);
    for (const auto* a : generating)
        for (const auto* b : generating) {
            if (a->request == b->request || a->group != b->group) continue;
            const bool touch = a->start <= b->end && b->start <= a->end;
            if (touch && std::abs(a->slot - b->slot) <= 1)
                neighbours[a->request].insert(b->request);
        }
    const int colours = int(palette().size());
    std::set<int> requests;
    for (const auto* bar : generating) requests.insert(bar->request);
    for (const int request : requests) {
        std::set<int> taken;
        for (const int other : neighbours[request])
            if (auto it = colourIndex_.find(other); it != colourIndex_.end())
                taken.insert(it->second);
        int chosen = (request - 1) % colours;
        for (int k = 0; k < colours; ++k) {
            const int candidate = (request - 1 + k) % colours;
            if (!taken.count(candidate)) {
                chosen = candidate;
                break;
            }
        }
        colourIndex_[request] = chosen;
    }
}

QColor GanttFigure::requestColour(int request) const {
    const auto it = colourIndex_.find(request);
    return it == colourIndex_.end() ? QColor() : palette()[std::size_t(it->second)];
}

QBrush GanttFigure::fillOf(const GanttBar& bar) const {
    return bar.padding ? QBrush(kPaddingFill) : QBrush(requestColour(bar.request));
}

QBrush GanttFigure::patternOf(const GanttBar& bar) const {
    return bar.padding ? QBrush(kPaddingHatch, Qt::BDiagPattern) : QBrush(Qt::NoBrush);
}

int GanttFigure::stepTick(double axisWidth) const {
    const QFontMetricsF metrics(scaledFont(0.9));
    const double label = metrics.horizontalAdvance(QString::number(std::max(steps_, 1))) +
                         metrics.averageCharWidth() * 3;
    for (int decade = 1;; decade *= 10)
        for (int factor : {1, 2, 5})
            if (double(steps_) / (decade * factor) * label <= axisWidth || decade > 1000000)
                return decade * factor;
}

double GanttFigure::paintPlot(QPainter& painter, const QRectF& area) {
    if (groups_.empty()) return area.top();
    const QFont tickFont = scaledFont(0.9), titleFont = scaledFont(1.0),
                headerFont = scaledFont(0.95, true), barFont = scaledFont(0.8);
    const QFontMetricsF ticks(tickFont), titles(titleFont), headers(headerFont);
    int rows = 0, widest = 0;
    for (const auto& g : groups_) {
        rows += g.slotCount;
        widest = std::max(widest, g.slotCount - 1);
    }
    const double left = titles.height() * 1.3 + ticks.horizontalAdvance(QString::number(widest)) +
                        ticks.averageCharWidth() * 1.5;
    const double bottom = ticks.height() * 1.3 + titles.height() * 1.3;
    const double headerHeight = headers.height() * 1.3;
    const QRectF plot(area.left() + left, area.top(), area.width() - left, area.height() - bottom);
    double rowHeight = (plot.height() - headerHeight * double(groups_.size())) / rows;
    rowHeight = std::min(rowHeight, titles.height() * 3.0);
    if (rowHeight <= 1 || plot.width() <= 1) return area.top();
    const double span = std::max(steps_, 1);
    auto x = [&](double step) { return plot.left() + step * plot.width() / span; };

    // Where each group's rows start.
    std::vector<double> groupTop;
    double y = plot.top();
    for (const auto& g : groups_) {
        groupTop.push_back(y + headerHeight);
        y += headerHeight + rowHeight * g.slotCount;
    }
    const double plotBottom = y;
    const int tick = stepTick(plot.width());

    // Grid at the step ticks, behind the bars.
    painter.setPen(QPen(gridColour(), 1));
    for (int t = 0; t <= steps_; t += tick)
        for (std::size_t g = 0; g < groups_.size(); ++g)
            painter.drawLine(QPointF(x(t), groupTop[g]),
                             QPointF(x(t), groupTop[g] + rowHeight * groups_[g].slotCount));

    std::vector<int> groupSteps(groups_.size(), 0);
    for (const auto& bar : bars_)
        groupSteps[std::size_t(bar.group)] = std::max(groupSteps[std::size_t(bar.group)], bar.end);
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        painter.setFont(headerFont);
        painter.setPen(textColour());
        const QRectF header(plot.left(), groupTop[g] - headerHeight, plot.width(), headerHeight);
        painter.drawText(header, Qt::AlignLeft | Qt::AlignVCenter,
                         fitted(headers, groupHeader(groups_[g], groupSteps[g]), header.width()));
        painter.setFont(tickFont);
        for (int s = 0; s < groups_[g].slotCount; ++s) {
            const QRectF label(area.left() + titles.height() * 1.3, groupTop[g] + s * rowHeight,
                               left - titles.height() * 1.3 - ticks.averageCharWidth() * 0.8,
                               rowHeight);
            painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QString::number(s));
        }
        painter.setPen(QPen(gridColour(), 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(
            QRectF(plot.left(), groupTop[g], plot.width(), rowHeight * groups_[g].slotCount));
    }

    painter.setFont(barFont);
    const QFontMetricsF barText(barFont);
    for (const auto& bar : bars_) {
        const double top = groupTop[std::size_t(bar.group)] + bar.slot * rowHeight;
        const QRectF rect(x(bar.start), top + rowHeight * 0.12, x(bar.end) - x(bar.start),
                          rowHeight * 0.76);
        fillRect(painter, rect, fillOf(bar), patternOf(bar));
        const QColor fill = fillOf(bar).color();
        painter.setPen(QPen(bar.padding ? kPaddingHatch : fill.darker(170), 1));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(rect);
        const QString number = QString::number(bar.request);
        if (!bar.padding && barText.horizontalAdvance(number) + 4 <= rect.width() &&
            barText.height() <= rect.height() + 2) {
            painter.setPen(textOn(fill));
            painter.drawText(rect, Qt::AlignCenter, number);
        }
    }

    // The step axis under the last group, and the two axis titles.
    painter.setPen(textColour());
    painter.setFont(tickFont);
    for (int t = 0; t <= steps_; t += tick) {
        painter.drawLine(QPointF(x(t), plotBottom), QPointF(x(t), plotBottom + 4));
        const QString label = QString::number(t);
        const double w = ticks.horizontalAdvance(label);
        const double at = std::clamp(x(t) - w / 2, area.left(), area.right() - w);
        painter.drawText(QRectF(at, plotBottom + 4, w + 1, ticks.height()), Qt::AlignCenter, label);
    }
    painter.setFont(titleFont);
    painter.drawText(QRectF(plot.left(), plotBottom + 4 + ticks.height() * 1.1, plot.width(),
                            titles.height() * 1.2),
                     Qt::AlignCenter, tr("step (each bar cell: one token made in that slot)"));
    painter.save();
    painter.translate(area.left(), (plot.top() + plotBottom) / 2);
    painter.rotate(-90);
    const double length = plotBottom - plot.top();
    painter.drawText(QRectF(-length / 2, 0, length, titles.height() * 1.2), Qt::AlignCenter,
                     tr("slot"));
    painter.restore();
    return plotBottom + bottom;
}

} // namespace inferscope::widgets
