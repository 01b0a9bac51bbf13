// Each panel fed a recorded run: its Qt model passes QAbstractItemModelTester and its series
// hold exactly the recorded points; log axes keep zeros (clamped); streaming appends rows.
#include "RecordedRun.hpp"
#include "compute/experiments/run/RunTables.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/ModelCardPanel.hpp"
#include "widgets/TableModel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSlider>
#include <QtTest>

using namespace inferscope::widgets;
using inferscope::compute::experiments::timingsTable;

class PanelsTest : public QObject {
    Q_OBJECT
private slots:
    void tableModelPassesTheTester();
    void timingsDrawsPrefillAndEachDecodeStep();
    void timingsStreamingAppendsRows();
    void kvCacheDrawsMeasuredBesideFormula();
    void modelCardDrawsBytesByType();
    void modelCardEscapesTextFromTheFile();
    void histogramCountsEveryDimensionOnOctaveBins();
    void outliersFollowTheLayerSlider();
    void outlierTableFindsThePlantedDimensions();
    void themeAndScaleKeepTheData();
    void screenshotsOfEachPanel();
};

void PanelsTest::tableModelPassesTheTester() {
    TableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTable(timingsTable(*recorded::partialRun()));
    QCOMPARE(model.rowCount(), 3);
    model.setTable(timingsTable(*recorded::run()));
    QCOMPARE(model.rowCount(), 6);
    QCOMPARE(model.columnCount(), 5);
    QCOMPARE(model.headerData(4, Qt::Horizontal).toString(), QString("time (ms)"));
    QCOMPARE(model.data(model.index(0, 0)).toString(), QString("prefill"));
    QCOMPARE(model.number(0, 4), 48.0);
    QVERIFY(std::isnan(model.number(0, 0))); // text is not a number
    model.setTable({});
    QCOMPARE(model.rowCount(), 0);
    // One number format: decimals group their thousands as whole numbers do.
    inferscope::compute::Table numbers;
    numbers.addColumn("perplexity", "", 2).addColumn("bytes").addColumn("small", "", 3);
    numbers.addRow({96686.0, std::int64_t{23040}, -1234.5});
    numbers.addRow({14.66, std::int64_t{7}, 0.25});
    model.setTable(numbers);
    QCOMPARE(model.data(model.index(0, 0)).toString(), QString("96,686.00"));
    QCOMPARE(model.data(model.index(0, 1)).toString(), QString("23,040"));
    QCOMPARE(model.data(model.index(0, 2)).toString(), QString("-1,234.500"));
    QCOMPARE(model.data(model.index(1, 0)).toString(), QString("14.66"));
    QCOMPARE(model.data(model.index(1, 2)).toString(), QString("0.250"));
}

void PanelsTest::timingsDrawsPrefillAndEachDecodeStep() {
    TimingsPanel panel;
    QCOMPARE(panel.dataTables().size(), std::size_t(0)); // nothing before a run
    panel.setRun(recorded::run());
    QCOMPARE(panel.axisScale(Qt::Vertical), AxisScale::Log);

    auto decode = panel.seriesPoints(TimingsPanel::DecodeSteps);
    QCOMPARE(decode.size(), qsizetype(recorded::kStepSeconds.size()));
    for (qsizetype i = 0; i < decode.size(); ++i) {
        QCOMPARE(decode[i].x(), double(i + 1)); // step i produced generated token i + 1
        double expected = recorded::kStepSeconds[std::size_t(i)] * 1e3;
        // The 0 s step sits on the axis' lower end instead of vanishing with its series.
        QCOMPARE(decode[i].y(), expected > 0 ? expected : 1.0);
    }
    QCOMPARE(panel.axisRange(Qt::Vertical), qMakePair(1.0, 100.0)); // whole decades around 4..48 ms
    auto first = panel.seriesPoints(TimingsPanel::FirstToken);
    QCOMPARE(first.size(), qsizetype(1));
    QCOMPARE(first[0], QPointF(0, 48.0));
    auto perToken = panel.seriesPoints(TimingsPanel::PrefillPerToken);
    QCOMPARE(perToken.size(), qsizetype(2));
    QCOMPARE(perToken[0].y(), 4.0); // 48 ms over 12 prompt tokens
    QCOMPARE(perToken[1], QPointF(5, 4.0));

    QVERIFY2(panel.summaryText().contains("Time to first token 48.0 ms"),
             qPrintable(panel.summaryText()));
    QVERIFY(panel.summaryText().contains("12 prompt tokens"));
    QVERIFY(panel.summaryText().contains("250.0 tokens/s")); // prefill: 12 / 0.048 s
    // Steps of 0 to 11.2 ms around a 10 ms median: the caption states the spread and does not
    // call it flat.
    QVERIFY2(panel.summaryText().contains("steps 0.0-11.2 ms, median 10.0 ms, spread 112%") &&
                 panel.summaryText().contains("not flat in this run"),
             qPrintable(panel.summaryText()));
    auto steady = std::make_shared<inferscope::widgets::RunRecord>(*recorded::run());
    steady->stepSeconds = {0.0100, 0.0105, 0.0102, 0.0099};
    panel.setRun(steady);
    QVERIFY2(panel.summaryText().contains("spread 6%") &&
                 panel.summaryText().contains(": flat (within 20%)"),
             qPrintable(panel.summaryText()));
    panel.setRun(recorded::run());
    auto tables = panel.dataTables();
    QCOMPARE(tables.size(), std::size_t(1));
    QCOMPARE(tables[0].rows.size(), std::size_t(6));
    QCOMPARE(tables[0].number(5, "sequence length"), 17.0);

    panel.setRun(nullptr);
    QCOMPARE(panel.seriesPoints(TimingsPanel::DecodeSteps).size(), qsizetype(0));
}

void PanelsTest::timingsStreamingAppendsRows() {
    TimingsPanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setRun(recorded::partialRun());
    QCOMPARE(panel.seriesPoints(TimingsPanel::DecodeSteps).size(), qsizetype(2));
    QSignalSpy resets(panel.model(), &QAbstractItemModel::modelReset);
    QSignalSpy inserts(panel.model(), &QAbstractItemModel::rowsInserted);
    panel.setRun(recorded::run());
    QCOMPARE(resets.count(), 0); // the view keeps its state while the run grows
    QCOMPARE(inserts.count(), 1);
    QCOMPARE(inserts.at(0).at(1).toInt(), 3);
    QCOMPARE(inserts.at(0).at(2).toInt(), 5);
    QCOMPARE(panel.seriesPoints(TimingsPanel::DecodeSteps).size(), qsizetype(5));
}

void PanelsTest::kvCacheDrawsMeasuredBesideFormula() {
    KvCachePanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setRun(recorded::run());
    auto measured = panel.seriesPoints(KvCachePanel::Measured);
    auto fp32 = panel.seriesPoints(KvCachePanel::FormulaFp32);
    auto fp16 = panel.seriesPoints(KvCachePanel::FormulaFp16);
    QCOMPARE(measured.size(), qsizetype(6));
    QCOMPARE(fp32.size(), qsizetype(6));
    QCOMPARE(fp16.size(), qsizetype(6));
    for (qsizetype i = 0; i < measured.size(); ++i) {
        double tokens = double(recorded::kPromptTokens + i);
        QCOMPARE(measured[i].x(), tokens);
        QCOMPARE(measured[i].y(), 46080.0 * tokens / 1024.0); // KiB
        QCOMPARE(fp32[i], measured[i]);                       // the formula at 4 B/element
        QCOMPARE(fp16[i].y(), 23040.0 * tokens / 1024.0);     // the chapter's 23,040 B/token
    }
    QVERIFY2(panel.summaryText().contains("46,080 B/token"), qPrintable(panel.summaryText()));
    QVERIFY(panel.summaryText().contains("23,040"));
    auto table = panel.dataTables().at(0);
    QCOMPARE(table.number(0, "formula fp16"), 23040.0 * 12);
}

void PanelsTest::modelCardDrawsBytesByType() {
    ModelCardPanel panel;
    QAbstractItemModelTester tester(panel.infoModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setModel(recorded::model());
    QCOMPARE(panel.barCategories(), QStringList({"F32", "Q4_1"})); // the total is not a bar
    auto bars = panel.seriesPoints(ModelCardPanel::WeightBytes);
    QCOMPARE(bars.size(), qsizetype(2));
    QCOMPARE(bars[0].y(), 4.0); // MiB
    QCOMPARE(bars[1].y(), 5.0);
    QCOMPARE(panel.infoModel()->rowCount(), 2);
    QCOMPARE(panel.kvModel()->rowCount(), 3); // fp32, fp16, int8
    QCOMPARE(panel.kvModel()->number(1, 1), 23040.0);
    QVERIFY2(panel.summaryText().contains("23,040 B per token"), qPrintable(panel.summaryText()));
    QVERIFY(panel.summaryText().contains("weights 9.0 MiB"));
    // The footprint table as the session built it: three parts, total, available, fits.
    QCOMPARE(panel.footprintModel()->rowCount(), 6);
    QCOMPARE(panel.footprintModel()->number(3, 1), 100.0 * 1024 * 1024);
    QVERIFY2(
        panel.summaryText().contains("footprint: 100.0 MiB on the device, 2.0 MiB on the host"),
        qPrintable(panel.summaryText()));
    QCOMPARE(panel.dataTables().size(), std::size_t(4));
    QCOMPARE(panel.dataTables().back().id, std::string("load-footprint"));
}

// A model's name and its table cells come from the file: control characters (ESC, BEL,
// the one-character CSI U+009B) show escaped in the window as in the terminal.
void PanelsTest::modelCardEscapesTextFromTheFile() {
    auto record = std::make_shared<inferscope::widgets::ModelRecord>(*recorded::model());
    record->config.name = "Evil\x1b[2J\xc2\x9bName\x07";
    record->info.addRow({std::string("name"), record->config.name});
    ModelCardPanel panel;
    panel.setModel(record);
    const QString summary = panel.summaryText();
    QVERIFY2(summary.contains("Evil\\x1b[2J\\xc2\\x9bName\\x07"), qPrintable(summary));
    QVERIFY(!summary.contains(QChar(0x1b)) && !summary.contains(QChar(0x9b)));
    auto* info = panel.infoModel();
    const QString cell = info->data(info->index(info->rowCount() - 1, 1)).toString();
    QCOMPARE(cell, QString("Evil\\x1b[2J\\xc2\\x9bName\\x07"));
}

void PanelsTest::histogramCountsEveryDimensionOnOctaveBins() {
    auto record = recorded::activations();
    // Layer 0: dimension 17 at 400, dimension 5 at 100, dimension 9 at 0, the rest 0.5..2.
    auto table = activationHistogram(record->maxAbsPerLayer, 0);
    // [0,1) [1,2) [2,4) ... [256,512): ten bins, up to the one holding 400.
    QCOMPARE(table.rows.size(), std::size_t(10));
    double total = 0;
    for (std::size_t i = 0; i < table.rows.size(); ++i) total += table.number(i, "dimensions");
    QCOMPARE(total, 64.0);
    QCOMPARE(table.number(0, "from"), 0.0);
    QCOMPARE(table.number(0, "to"), 1.0);
    for (std::size_t i = 1; i < table.rows.size(); ++i)
        QCOMPARE(table.number(i, "to"), 2 * table.number(i, "from")); // doubling bins
    QCOMPARE(table.number(9, "to"), 512.0);
    QCOMPARE(table.number(9, "dimensions"), 1.0); // 400
    QCOMPARE(table.number(7, "from"), 64.0);
    QCOMPARE(table.number(7, "dimensions"), 1.0); // 100 in [64, 128)
    double far = 0;
    for (std::size_t i = 0; i < table.rows.size(); ++i)
        if (table.number(i, "from") >= 50) far += table.number(i, "dimensions");
    QCOMPARE(far, 2.0);                            // the two planted dimensions
    QVERIFY(table.number(0, "dimensions") >= 1.0); // the zero lands in the first bin
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationHistogram(record->maxAbsPerLayer, 3));
}

void PanelsTest::outliersFollowTheLayerSlider() {
    ActivationOutliersPanel panel;
    QAbstractItemModelTester tester(panel.histogramModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(!panel.hasData());
    QVERIFY(!panel.emptyHint().isEmpty()); // what to press, instead of blank axes
    panel.setActivations(recorded::activations());
    QVERIFY(panel.hasData());
    QCOMPARE(panel.axisScale(Qt::Horizontal), AxisScale::Category);
    QCOMPARE(panel.axisScale(Qt::Vertical), AxisScale::Log);
    auto* slider = panel.findChild<QSlider*>("layerSlider");
    QVERIFY(slider);
    QCOMPARE(slider->maximum(), 2);
    QCOMPARE(panel.histogramModel()->rowCount(), 10);
    auto bars = panel.seriesPoints(ActivationOutliersPanel::Histogram);
    QCOMPARE(bars.size(), qsizetype(10)); // every layer's largest (400) sits in the same bin
    QCOMPARE(panel.barCategories().front(), QString::fromUtf8("−"));
    // Labelled by the exponent n of [2ⁿ, 2ⁿ⁺¹): [256, 512) is 8, [1, 2) is 0, [0, 1) is −.
    QCOMPARE(panel.barCategories().back(), QString("8"));
    QCOMPARE(panel.barCategories().at(1), QString("0"));
    double total = 0;
    for (const auto& bar : bars) total += bar.y();
    QCOMPARE(total, 64.0);

    QSignalSpy changed(&panel, &ActivationOutliersPanel::layerChanged);
    const int bin100 = 7;                                     // [64, 128)
    QCOMPARE(panel.histogramModel()->number(bin100, 3), 1.0); // dimension 5 at 100
    slider->setValue(2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(panel.layer(), 2);
    // Layer 2 has dimension 5 at 300, not 100: the histogram moved with the slider.
    QCOMPARE(panel.histogramModel()->number(bin100, 3), 0.0);
    QCOMPARE(panel.histogramModel()->number(9, 3), 2.0); // 300 and 400 in [256, 512)
    QVERIFY2(panel.summaryText().startsWith("Layer 2 (of 0-2): dimension 17 reaches 400"),
             qPrintable(panel.summaryText()));
    auto tables = panel.dataTables();
    QCOMPARE(tables.size(), std::size_t(3));
    QVERIFY(tables[0].title.find("Layer 2") != std::string::npos);
}

void PanelsTest::outlierTableFindsThePlantedDimensions() {
    auto record = recorded::activations();
    auto table = activationLayers(record->maxAbsPerLayer, 3, std::uint32_t(record->positions));
    QCOMPARE(table.rows.size(), std::size_t(3));
    for (std::size_t layer = 0; layer < 3; ++layer) {
        QCOMPARE(table.number(layer, "top dimension"), 17.0);
        QCOMPARE(table.number(layer, "max |h|"), 400.0);
        QCOMPARE(std::get<std::string>(table.at(layer, "top 3 dimensions")).substr(0, 6),
                 std::string("17, 5,"));
        QVERIFY(table.number(layer, "max/median") > 150); // the median sits near 1.25
    }
}

void PanelsTest::themeAndScaleKeepTheData() {
    TimingsPanel panel;
    panel.setRun(recorded::run());
    auto before = panel.seriesPoints(TimingsPanel::DecodeSteps);
    panel.setDarkTheme(true);
    QVERIFY(panel.darkTheme());
    panel.setPresentationScale(2.0);
    QCOMPARE(panel.presentationScale(), 2.0);
    QCOMPARE(panel.seriesPoints(TimingsPanel::DecodeSteps), before);
    panel.resize(900, 600);
    const QString path = recorded::artifactDirectory() + "/panel-timings-dark-150.png";
    panel.setPresentationScale(1.5);
    QVERIFY(ChartExport::writePng(panel, path).isEmpty());
    QImage image(path);
    QVERIFY(!image.isNull());
    QVERIFY(qGray(image.pixel(image.width() / 2, image.height() / 4)) < 128); // a dark chart
    qInfo().noquote() << "dark panel screenshot:" << path;
    QPalette dark;
    dark.setColor(QPalette::Window, Qt::black);
    dark.setColor(QPalette::WindowText, Qt::white);
    QVERIFY(isDarkPalette(dark));
    QVERIFY(!isDarkPalette(QPalette(Qt::white)));
}

void PanelsTest::screenshotsOfEachPanel() {
    TimingsPanel timings;
    timings.setRun(recorded::run());
    KvCachePanel kv;
    kv.setRun(recorded::run());
    ModelCardPanel card;
    card.setModel(recorded::model());
    ActivationOutliersPanel outliers;
    outliers.setActivations(recorded::activations());
    const QString folder = recorded::artifactDirectory();
    for (ChartPanel* panel : std::initializer_list<ChartPanel*>{&timings, &kv, &card, &outliers}) {
        panel->resize(900, 600);
        QString path = folder + "/panel-" + panel->panelId() + ".png";
        QString error = ChartExport::writePng(*panel, path);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QImage image(path);
        QVERIFY(!image.isNull());
        // The figure: the chart at the panel's width, its caption below; no controls.
        QVERIFY(image.width() >= panel->chartWidget()->width());
        QVERIFY(image.height() > panel->chartWidget()->height());
        qInfo().noquote() << "panel screenshot:" << path;
    }
}

QTEST_MAIN(PanelsTest)
#include "test_panels.moc"
