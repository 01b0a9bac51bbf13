#pragma once
// Text a figure could not show whole at its present size and scale: Qt Charts' axis labels,
// titles and legend entries cut to "..." or reaching past the chart's edge, and the texts a
// PaintedFigure elided. The projector test and the scripted --screenshot walkthrough fail on
// any, naming the figure and the text.
#include <QString>
#include <QStringList>

class QWidget;

namespace inferscope::widgets {

// One line per cut text under `root` (visible figures only): "<figure title>: <text>".
QStringList cutFigureTexts(const QWidget& root);

} // namespace inferscope::widgets
