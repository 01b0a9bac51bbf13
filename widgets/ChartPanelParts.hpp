#pragma once
// ChartPanel's Qt Charts side, shared by its two sources: ChartPanel.cpp (series, axes, data)
// and ChartTheme.cpp (colours, fonts, presentation scale). Not for use outside them.
#include "widgets/ChartPanel.hpp"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QXYSeries>
#include <limits>
#include <vector>

namespace inferscope::widgets {

// Okabe-Ito: distinguishable for colour-blind readers, on light and dark backgrounds.
inline const QColor kSeriesColours[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00),
                                        QColor(0x00, 0x9E, 0x73), QColor(0xCC, 0x79, 0xA7),
                                        QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00)};

inline QFont scaledFont(QFont font, double scale, bool bold = false) {
    font.setPointSizeF(font.pointSizeF() * scale);
    font.setBold(bold);
    return font;
}
struct ChartPanel::Chart {
    struct Series {
        QString name;
        SeriesKind kind;
        QAbstractSeries* series = nullptr; // owned by the chart
        QXYSeries* xy = nullptr;           // the points (an area's upper line)
        QBarSet* bars = nullptr;
        QList<QPointF> points;
        QColor colour; // invalid: the palette's, by index
    };
    struct Axis {
        QAbstractAxis* axis = nullptr; // owned by the chart
        AxisScale scale = AxisScale::Linear;
        QString title;
        double min = std::numeric_limits<double>::quiet_NaN(); // the range as set (NaN: not yet)
        double max = std::numeric_limits<double>::quiet_NaN();
    };
    QChart* chart = nullptr; // owned by the view
    QChartView* view = nullptr;
    std::vector<Series> series;
    Axis x, y;
    QStringList categories;
    bool horizontalBars = false; // categories down the left, bars across (setHorizontalBars)

    Axis& axis(Qt::Orientation o) { return o == Qt::Horizontal ? x : y; }
    void attach(QAbstractSeries* s) {
        if (x.axis) s->attachAxis(x.axis);
        if (y.axis) s->attachAxis(y.axis);
    }
};

} // namespace inferscope::widgets
