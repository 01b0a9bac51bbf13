#pragma once
// The Scheduler panel's timeline as a Gantt chart: for each policy a group of slot rows
// (static above, continuous below) on one step axis; per request one bar over the steps it
// generates in its slot, in the request's colour (the same in both groups, and different from
// the requests next to it), its number written in it where it fits; static batching's padding
// (a finished request whose slot waits for its group's longest) a grey hatched bar after it;
// an idle slot blank. Built from the "scheduler-timeline" table, so a partial table (the steps
// run so far) draws the bars so far.
#include "compute/Table.hpp"
#include "widgets/PaintedFigure.hpp"

#include <map>
#include <vector>

namespace inferscope::widgets {

struct GanttBar {
    int group = 0;   // index into the figure's groups (policies)
    int slot = 0;    // from 0
    int request = 0; // the mix's request number, from 1
    int start = 0;   // first step
    int end = 0;     // one past the last step
    bool padding = false;
};

class GanttFigure : public PaintedFigure {
    Q_OBJECT
public:
    struct Group {
        QString policy; // the timeline's policy name
        int slotCount = 0;
    };

    explicit GanttFigure(ChartPanel* panel);
    // Groups in order of first appearance in the table; slots from the largest slot seen.
    void setTimeline(const compute::Table& timeline);
    void clear();

    const std::vector<Group>& groups() const { return groups_; }
    const std::vector<GanttBar>& bars() const { return bars_; }
    int steps() const { return steps_; } // the axis' end: one past the last step drawn
    QColor requestColour(int request) const;
    // A request's bar: its colour, solid; padding: light grey with a dark hatch over it.
    QBrush fillOf(const GanttBar& bar) const;
    QBrush patternOf(const GanttBar& bar) const;
    // The tick interval of the step axis at this width (1, 2, 5, 10, 20, 50, ...).
    int stepTick(double axisWidth) const;

signals:
    // The bars changed (a partial timeline or a result drawn, or cleared).
    void timelineChanged();

protected:
    double paintPlot(QPainter& painter, const QRectF& area) override;

private:
    void colourRequests();

    std::vector<Group> groups_;
    std::vector<GanttBar> bars_;
    std::map<int, int> colourIndex_; // request -> palette index
    int steps_ = 0;
};

} // namespace inferscope::widgets
