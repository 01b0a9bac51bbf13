// ChartExport: every panel's PNG loads as an image, its SVG is XML with an <svg> root and
// the panel's title, its CSV has the header and one line per row, its JSON parses and holds
// compute::toJson of each table.
#include "RecordedRun.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace inferscope::widgets;

namespace {
QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}
} // namespace

class ChartExportTest : public QObject {
    Q_OBJECT
private slots:
    void csvQuotesAndKeepsFullPrecision();
    void exportAllWritesFourValidFormats_data();
    void exportAllWritesFourValidFormats();
    void emptyPanelHasNoDataButStillDraws();
    void unwritableFolderIsAnError();
    void legendWrapsUnderTheChartAndLeavesWithTheFigure();
};

void ChartExportTest::csvQuotesAndKeepsFullPrecision() {
    inferscope::compute::Table t;
    t.id = "t";
    t.addColumn("name").addColumn("time", "ms", 1).addColumn("count");
    t.addRow({std::string("a, \"quoted\" one"), 0.123456789, std::int64_t{23040}});
    t.addRow({std::monostate{}, 2.0, std::int64_t{-1}});
    QString csv = ChartExport::toCsv(t);
    QStringList lines = csv.split("\r\n");
    QCOMPARE(lines.size(), 4); // header, 2 rows, and the empty piece after the last CRLF
    QCOMPARE(lines[0], QString("name,time (ms),count"));
    QCOMPARE(lines[1],
             QString("\"a, \"\"quoted\"\" one\",0.123456789,23040")); // no 1-digit rounding
    QCOMPARE(lines[2], QString(",2,-1"));
    QCOMPARE(lines[3], QString());
}

void ChartExportTest::exportAllWritesFourValidFormats_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("timings") << "timings";
    QTest::newRow("kv-cache") << "kv-cache";
    QTest::newRow("model-card") << "model-card";
    QTest::newRow("activation-outliers") << "activation-outliers";
    QTest::newRow("kernel-timings") << "kernel-timings";
    QTest::newRow("cached-vs-uncached") << "cached-vs-uncached";
    QTest::newRow("quant-levels") << "quant-levels";
    QTest::newRow("schemes") << "schemes";
}

void ChartExportTest::exportAllWritesFourValidFormats() {
    QFETCH(QString, kind);
    std::unique_ptr<ChartPanel> panel;
    if (kind == "timings") {
        auto p = std::make_unique<TimingsPanel>();
        p->setRun(recorded::run());
        panel = std::move(p);
    } else if (kind == "kv-cache") {
        auto p = std::make_unique<KvCachePanel>();
        p->setRun(recorded::run());
        panel = std::move(p);
    } else if (kind == "model-card") {
        auto p = std::make_unique<ModelCardPanel>();
        p->setModel(recorded::model());
        panel = std::move(p);
    } else if (kind == "kernel-timings") {
        auto p = std::make_unique<KernelTimingsPanel>();
        p->setRun(recorded::gpuRun());
        panel = std::move(p);
    } else if (kind == "cached-vs-uncached") {
        auto p = std::make_unique<CachingPanel>();
        p->setComparison(recorded::comparison());
        panel = std::move(p);
    } else if (kind == "quant-levels") {
        auto p = std::make_unique<QuantLevelsPanel>();
        p->setActivations(recorded::recordedStream());
        panel = std::move(p);
    } else if (kind == "schemes") {
        auto p = std::make_unique<SchemesPanel>();
        p->setWeightReport(recorded::weightTables());
        p->setQualityReport(recorded::qualityTables());
        panel = std::move(p);
    } else {
        auto p = std::make_unique<ActivationOutliersPanel>();
        p->setActivations(recorded::activations());
        panel = std::move(p);
    }
    QCOMPARE(panel->panelId(), kind);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    QStringList files = ChartExport::exportAll(*panel, QDir(dir.filePath("out")), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QString stem = dir.filePath("out/" + kind);
    auto tables = panel->dataTables();
    QCOMPARE(files.size(), qsizetype(3 + tables.size()));
    for (const auto& file : files) QVERIFY2(QFileInfo(file).size() > 0, qPrintable(file));

    QImage png(stem + ".png");
    QVERIFY(!png.isNull());
    QVERIFY(png.width() > 100 && png.height() > 100);
    // Not a blank image: a chart draws lines and text in several colours.
    QSet<QRgb> colours;
    for (int y = 0; y < png.height(); y += 7)
        for (int x = 0; x < png.width(); x += 7) colours.insert(png.pixel(x, y));
    QVERIFY2(colours.size() > 5, qPrintable(QString::number(colours.size())));

    QXmlStreamReader svg(readAll(stem + ".svg"));
    QVERIFY(svg.readNextStartElement());
    QCOMPARE(svg.name().toString(), QString("svg"));
    bool sawTitle = false, sawDescription = false;
    int elements = 0;
    while (!svg.atEnd()) {
        if (svg.readNext() != QXmlStreamReader::StartElement) continue;
        ++elements;
        if (svg.name() == QLatin1String("title"))
            sawTitle = svg.readElementText() == panel->title();
        else if (svg.name() == QLatin1String("desc"))
            sawDescription = svg.readElementText() == panel->explanation();
    }
    QVERIFY2(!svg.hasError(), qPrintable(svg.errorString()));
    QVERIFY(sawTitle);
    QVERIFY(sawDescription);
    QVERIFY(elements > 20); // drawn, not an empty document

    QStringList csv = QString::fromUtf8(readAll(stem + ".csv")).split("\r\n", Qt::SkipEmptyParts);
    QCOMPARE(csv.size(), qsizetype(tables[0].rows.size() + 1));
    QCOMPARE(csv[0], ChartExport::toCsv(tables[0]).split("\r\n").front());
    for (std::size_t i = 1; i < tables.size(); ++i)
        QVERIFY(QFileInfo::exists(stem + "-" + QString::fromStdString(tables[i].id) + ".csv"));

    auto json = nlohmann::json::parse(readAll(stem + ".json").toStdString());
    QCOMPARE(QString::fromStdString(json.at("panel").get<std::string>()), kind);
    QCOMPARE(json.at("tables").size(), tables.size());
    for (std::size_t i = 0; i < tables.size(); ++i)
        QVERIFY(json["tables"][i] == inferscope::compute::toJson(tables[i]));
}

void ChartExportTest::emptyPanelHasNoDataButStillDraws() {
    TimingsPanel panel;
    QTemporaryDir dir;
    QString error;
    auto files = ChartExport::exportAll(panel, QDir(dir.path()), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(files.size(), qsizetype(3)); // png, svg, json: no CSV without rows
    QVERIFY(!ChartExport::writeCsv(panel, dir.filePath("x.csv")).isEmpty());
}

void ChartExportTest::unwritableFolderIsAnError() {
    TimingsPanel panel;
    panel.setRun(recorded::run());
    QString error;
    auto files = ChartExport::exportAll(panel, QDir("/proc/inferscope-no-such-folder"), &error);
    QVERIFY(files.isEmpty());
    QVERIFY(!error.isEmpty());
}

void ChartExportTest::legendWrapsUnderTheChartAndLeavesWithTheFigure() {
    // No key to an empty chart.
    TimingsPanel panel;
    QVERIFY(panel.legendWidget()->isHidden());
    panel.setRun(recorded::run());
    auto* legend = qobject_cast<QLabel*>(panel.legendWidget());
    QVERIFY(legend && !legend->isHidden());
    QVERIFY(panel.seriesCount() > 1);
    for (int s = 0; s < panel.seriesCount(); ++s) {
        const QString name = panel.seriesName(s);
        QVERIFY2(legend->text().contains(name.toHtmlEscaped().replace(' ', "&nbsp;")) ||
                     legend->text().contains(name.toHtmlEscaped()),
                 qPrintable(name));
    }
    // Where one row is too narrow for every entry, the label takes more lines (Qt's own
    // legend kept one row and cut the names to fit it).
    panel.setPresentationScale(2.0);
    QVERIFY(legend->heightForWidth(320) > legend->heightForWidth(4000));
    // The export carries it: the measured line's stroke, drawn only in the legend, is text in
    // the SVG (as a character or a reference to it).
    QTemporaryDir dir;
    const QString svg = dir.filePath("timings.svg");
    QVERIFY(ChartExport::writeSvg(panel, svg).isEmpty());
    const QString text = QString::fromUtf8(readAll(svg));
    QVERIFY(text.contains(QChar(0x2501)) || text.contains("&#x2501;", Qt::CaseInsensitive) ||
            text.contains("&#9473;"));
    // A lone series of bars needs no key: its value axis names it.
    ModelCardPanel card;
    card.setModel(recorded::model());
    QVERIFY(card.hasData());
    QVERIFY(card.legendWidget()->isHidden());
}

QTEST_MAIN(ChartExportTest)
#include "test_chart_export.moc"
