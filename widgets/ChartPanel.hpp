#pragma once
// Base of every chart panel: a title, one sentence that says what the chart shows (caption
// and tooltip), a chart, and the panel's data as compute::Tables for export. Panels speak to
// the chart only through this small interface (series of points, bars, two axes), so the
// Qt Charts code lives in ChartPanel.cpp alone and Qt Graphs can replace it there.
#include "compute/Table.hpp"

#include <QColor>
#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace inferscope::widgets {

enum class SeriesKind { Line, DashedLine, Scatter, Area, Bars };
enum class AxisScale { Linear, Log, Category }; // Category: the x axis of a bar chart

class ChartPanel : public QWidget {
    Q_OBJECT
public:
    // A log axis spans whole decades around the positive values; values <= 0 (which would
    // make Qt Charts drop the whole series) are drawn at its lower end, never below this.
    static constexpr double kLogFloor = 1e-9;

    ChartPanel(QString id, QString title, QString explanation, QWidget* parent = nullptr);
    ~ChartPanel() override;

    QString panelId() const { return id_; }
    QString title() const { return title_; }
    QString explanation() const { return explanation_; }
    // What the panel currently shows, as tables (CSV/JSON export, tests).
    virtual std::vector<compute::Table> dataTables() const = 0;

    // The chart as drawn: series names and their points after log clamping (for tests). A
    // hidden panel draws what it was given when it is shown or read (drawPending).
    int seriesCount() const;
    QString seriesName(int series) const;
    QList<QPointF> seriesPoints(int series) const; // bars: (index, value)
    QStringList barCategories() const;
    QString axisTitle(Qt::Orientation orientation) const;
    AxisScale axisScale(Qt::Orientation orientation) const;
    QPair<double, double> axisRange(Qt::Orientation orientation) const; // (min, max)
    QString summaryText() const;
    QWidget* chartWidget() const;
    // What an export holds besides the chart (title inside it): the legend (hidden while no
    // series holds a point), the summary line (hidden when empty) and the caption. Controls and
    // tables below them are left out of PNG/SVG.
    QWidget* legendWidget() const;
    QWidget* summaryWidget() const;
    QWidget* captionWidget() const;
    // The notes of dataTables() that qualify its figures ("B = 64 left out: ..."), one line
    // each as the CLI prints them under its tables, shown under the caption (hidden when none;
    // three lines in sight, the rest by scrolling; whole in an export).
    QString notesText() const;
    QWidget* notesWidget() const;
    static QString tableNotes(const std::vector<compute::Table>& tables);
    // Whether any series holds a point (or the painted figure shows data): before that the
    // chart shows its hint instead of axes.
    bool hasData() const;
    QString emptyHint() const { return emptyHint_; }

    // Fonts of chart and captions multiplied by scale (1 = the application font).
    void setPresentationScale(double scale);
    double presentationScale() const { return scale_; }
    // Light or dark chart theme; follows the palette unless set explicitly.
    void setDarkTheme(bool dark);
    bool darkTheme() const { return dark_; }

protected:
    int addSeries(const QString& name, SeriesKind kind);
    void setAxis(Qt::Orientation orientation, const QString& title, AxisScale scale);
    // Replaces all points at once; values <= 0 on a log axis sit on the axis' lower end.
    void setSeriesPoints(int series, const QList<QPointF>& points);
    // Several series at once: the axes are fitted and the chart laid out once, not per series.
    void setSeriesPoints(const std::vector<std::pair<int, QList<QPointF>>>& updates);
    // Bars: one value per category, for a Bars series (the x axis becomes categorical).
    void setBarValues(int series, const QStringList& categories, const QList<qreal>& values);
    // A line of measured figures under the chart (time to first token, tokens/s, ...).
    void setSummary(const QString& text);
    // Bars drawn across, their categories listed down the left edge, first at the top: long
    // names stay whole and upright. Call before adding the Bars series; the axes keep their
    // roles (setAxis(Horizontal, ...) is still the category axis).
    void setHorizontalBars();
    // A Scatter series' marker diameter in pixels (10 unless set).
    void setMarkerSize(int series, double size);
    // A fixed colour for one series instead of the palette's (the same in both themes).
    void setSeriesColour(int series, const QColor& colour);
    // A Scatter series drawn as squares instead of circles (cells of a grid).
    void setSquareMarkers(int series);
    // What to press to fill the chart; shown over it while no series holds a point.
    void setEmptyHint(const QString& text);
    // A figure the panel paints itself (PaintedFigure) in the chart's place: the layout, the
    // exports and chartWidget() take it instead; the panel says when it shows data.
    void setFigure(QWidget* figure);
    void setFigureHasData(bool hasData);
    // Extra controls or views below the chart (a slider, a table).
    QVBoxLayout* extrasLayout() const { return extras_; }

    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    struct Chart; // the Qt Charts side
    void applyTheme();
    void applyFonts();
    bool updateAxisRanges(); // true when a range changed
    void drawSeries(std::size_t index);
    void drawBars(std::size_t index);
    void drawCategories();
    void updateHint();
    // The series' names beside their colour and stroke, in a label under the chart that wraps
    // (Qt's legend keeps to one row or one column and cuts the names to fit it).
    void refreshLegend();
    // The chart's least size at this scale: bars across get a row of text per category.
    void fitChartMinimum();
    // A hidden panel keeps new points and draws them into the chart once it is shown or read:
    // during a run the panels out of sight cost nothing on the GUI thread.
    bool deferDrawing();
    void drawPending() const;
    // The notes follow the tables once the panel's update is over (queued, coalesced); a
    // hidden panel reads them when shown.
    void scheduleNotes();
    void refreshNotes() const;
    bool eventFilter(QObject* watched, QEvent* event) override;

    QString id_, title_, explanation_;
    std::unique_ptr<Chart> chart_;
    QString emptyHint_;
    QWidget* figure_ = nullptr; // a painted figure in the chart's place (setFigure)
    bool figureHasData_ = false;
    QLabel* hint_ = nullptr;   // over the chart while it has no data
    QLabel* legend_ = nullptr; // under the chart
    QLabel* caption_ = nullptr;
    QLabel* summary_ = nullptr;
    QLabel* notes_ = nullptr;
    QScrollArea* notesArea_ = nullptr; // three lines high: the chart keeps its room
    QVBoxLayout* extras_ = nullptr;
    double scale_ = 1.0;
    bool dark_ = false;
    bool themeFollowsPalette_ = true;
    mutable bool drawingPending_ = false;
    mutable bool notesPending_ = false;
    bool notesQueued_ = false;
};

// Whether a palette is a dark one (window darker than its text).
bool isDarkPalette(const QPalette& palette);

} // namespace inferscope::widgets
