#include "widgets/ChartExport.hpp"

#include "widgets/ChartPanel.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLayout>
#include <QPainter>
#include <QPixmap>
#include <QSaveFile>
#include <QScrollArea>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace inferscope::widgets::ChartExport {

namespace {
// Every figure leaves at one size made for a report page, whatever the window's size and
// scale: a chart 1000 x 620 pixels with its text at presentation scale 1.5, so that printed
// 16 cm wide its smallest labels read at about 8 pt. The labels under it take its width.
constexpr double kReportScale = 1.5;

// Lays the panel's figure out at the report size for one export and gives the panel back its
// scale and layout afterwards (all before the window repaints: nothing flickers).
class ReportLayout {
public:
    explicit ReportLayout(ChartPanel& panel)
        : panel_(panel), windowScale_(panel.presentationScale()) {
        // The table notes are part of the figure: shown (or hidden) before the layout.
        panel.notesWidget();
        panel.setPresentationScale(kReportScale);
        // The panel's layout would size the chart back (a hidden panel's at every render):
        // it rests until the figure is saved.
        if (auto* layout = panel.layout()) layout->setEnabled(false);
        // The notes scroll on screen; in the figure they are whole, at the chart's width.
        notesArea_ =
            qobject_cast<QScrollArea*>(panel.notesWidget()->parentWidget()
                                           ? panel.notesWidget()->parentWidget()->parentWidget()
                                           : nullptr);
        if (notesArea_) notesArea_->setWidgetResizable(false);
        auto* chart = panel.chartWidget();
        const QSize report = reportChartSize().expandedTo(chart->minimumSize());
        // A hidden widget gets its resize events only when it is shown or rendered, and the
        // chart lays itself out on a posted request: without both, the scene kept its earlier
        // layout and the axis, the legend and half the title fell off the saved figure's
        // edges. A render into a scratch pixmap delivers the resizes; the posted layout
        // requests are sent now.
        chart->resize(report);
        QPixmap scratch(1, 1);
        chart->render(&scratch);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    ~ReportLayout() {
        panel_.setPresentationScale(windowScale_);
        if (notesArea_) notesArea_->setWidgetResizable(true);
        if (auto* layout = panel_.layout()) {
            layout->setEnabled(true);
            layout->invalidate();
            layout->activate();
        }
    }
    ReportLayout(const ReportLayout&) = delete;
    ReportLayout& operator=(const ReportLayout&) = delete;

private:
    ChartPanel& panel_;
    double windowScale_;
    QScrollArea* notesArea_ = nullptr;
};

QString writeBytes(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return "cannot write " + path + ": " + file.errorString();
    file.write(bytes);
    if (!file.commit()) return "cannot write " + path + ": " + file.errorString();
    return {};
}

// The labels under the chart that belong to the figure, at their laid-out size: the legend
// and the summary when they say something, the caption and the table notes, at the chart's
// width.
QList<QWidget*> figureParts(ChartPanel& panel) {
    QList<QWidget*> parts;
    for (auto* part : {panel.legendWidget(), panel.summaryWidget(), panel.captionWidget(),
                       panel.notesWidget()}) {
        auto* label = qobject_cast<QLabel*>(part);
        if (!label || label->text().isEmpty() || label->isHidden()) continue;
        const int width = panel.chartWidget()->width();
        label->resize(width, label->heightForWidth(width));
        parts << label;
    }
    return parts;
}

QString safeName(const std::string& id) {
    QString name = QString::fromStdString(id);
    for (auto& c : name)
        if (!c.isLetterOrNumber() && c != '-' && c != '_') c = '-';
    return name;
}

QSize figureSize(ChartPanel& panel) {
    QSize size = panel.chartWidget()->size();
    for (auto* part : figureParts(panel)) size.rheight() += part->height();
    return size;
}

// The figure: the chart (its title drawn inside), then the summary and the caption at the
// chart's width; never the panel's buttons, spin boxes or tables.
void renderFigure(ChartPanel& panel, QPainter& painter) {
    const QSize size = figureSize(panel);
    painter.fillRect(QRect(QPoint(0, 0), size), panel.palette().window());
    auto* chart = panel.chartWidget();
    chart->render(&painter, QPoint(0, 0), QRegion(), QWidget::DrawChildren);
    int y = chart->height();
    for (auto* part : figureParts(panel)) {
        part->render(&painter, QPoint(0, y), QRegion(), QWidget::DrawChildren);
        y += part->height();
    }
}
} // namespace

QSize reportChartSize() {
    return {1000, 620};
}

QString toCsv(const compute::Table& table) {
    return QString::fromStdString(compute::renderCsv(table));
}

QString writePng(ChartPanel& panel, const QString& path) {
    const ReportLayout reportSize(panel);
    const QSize size = figureSize(panel);
    if (size.isEmpty()) return "the panel '" + panel.panelId() + "' drew nothing";
    const qreal ratio = panel.devicePixelRatioF();
    QPixmap pixmap(size * ratio);
    pixmap.setDevicePixelRatio(ratio);
    {
        QPainter painter(&pixmap);
        renderFigure(panel, painter);
    }
    if (!pixmap.save(path, "PNG")) return "cannot write " + path;
    return {};
}

QString writeSvg(ChartPanel& panel, const QString& path) {
    const ReportLayout reportSize(panel);
    const QSize size = figureSize(panel);
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(panel.title());
    generator.setDescription(panel.explanation());
    {
        QPainter painter;
        if (!painter.begin(&generator)) return "cannot write " + path;
        renderFigure(panel, painter);
    } // the painter's end() finishes the file
    if (QFileInfo(path).size() == 0) return "cannot write " + path;
    return {};
}

QString writeCsv(const ChartPanel& panel, const QString& path) {
    auto tables = panel.dataTables();
    if (tables.empty()) return "the panel '" + panel.panelId() + "' has no data yet";
    if (auto error = writeBytes(path, toCsv(tables.front()).toUtf8()); !error.isEmpty())
        return error;
    QFileInfo info(path);
    for (std::size_t i = 1; i < tables.size(); ++i) {
        QString extra =
            info.dir().filePath(info.completeBaseName() + "-" + safeName(tables[i].id) + ".csv");
        if (auto error = writeBytes(extra, toCsv(tables[i]).toUtf8()); !error.isEmpty())
            return error;
    }
    return {};
}

QString writeJson(const ChartPanel& panel, const QString& path) {
    nlohmann::json document = {{"panel", panel.panelId().toStdString()},
                               {"title", panel.title().toStdString()},
                               {"description", panel.explanation().toStdString()},
                               {"tables", nlohmann::json::array()}};
    for (const auto& table : panel.dataTables())
        document["tables"].push_back(compute::toJson(table));
    return writeBytes(
        path, QByteArray::fromStdString(
                  document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
}

QStringList exportAll(ChartPanel& panel, const QDir& folder, QString* error) {
    QStringList written;
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return written;
    };
    if (!folder.mkpath(".")) return fail("cannot create " + folder.absolutePath());
    const QString stem = folder.filePath(panel.panelId());
    if (auto e = writePng(panel, stem + ".png"); !e.isEmpty()) return fail(e);
    written << stem + ".png";
    if (auto e = writeSvg(panel, stem + ".svg"); !e.isEmpty()) return fail(e);
    written << stem + ".svg";
    auto tables = panel.dataTables();
    if (!tables.empty()) {
        if (auto e = writeCsv(panel, stem + ".csv"); !e.isEmpty()) return fail(e);
        written << stem + ".csv";
        for (std::size_t i = 1; i < tables.size(); ++i)
            written << stem + "-" + safeName(tables[i].id) + ".csv";
    }
    if (auto e = writeJson(panel, stem + ".json"); !e.isEmpty()) return fail(e);
    written << stem + ".json";
    if (error) error->clear();
    return written;
}

} // namespace inferscope::widgets::ChartExport
