// Each panel fed a recorded run: its Qt model passes QAbstractItemModelTester and its series
// hold exactly the recorded points; log axes keep zeros (clamped); streaming appends rows.
#include "RecordedRun.hpp"
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

class PanelsTest : public QObject {
    Q_OBJECT
private slots:
    void tableModelPassesTheTester();
    void timingsDrawsPrefillAndEachDecodeStep();
    void timingsStreamingAppendsRows();
    void kvCacheDrawsMeasuredBesideFormula();
    void modelCardDrawsBytesByType();
    void histogramCountsEveryDimensionOnLogBins();
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
    QCOMPARE(panel.dataTables().size(), std::size_t(3));
}

void PanelsTest::histogramCountsEveryDimensionOnLogBins() {
    auto record = recorded::activations();
    auto table = activationHistogram(record->maxAbsPerLayer[0], 0.1, 1000.0, 32);
    QCOMPARE(table.rows.size(), std::size_t(32));
    double total = 0;
    for (std::size_t i = 0; i < table.rows.size(); ++i) total += table.number(i, "dimensions");
    QCOMPARE(total, 64.0);
    QCOMPARE(table.number(0, "bin from"), 0.1);
    QVERIFY(std::abs(table.number(31, "bin to") - 1000.0) < 1e-9);
    // Equal width in log10: each bin spans 10^(4/32).
    QVERIFY(std::abs(table.number(3, "bin to") / table.number(3, "bin from") -
                     std::pow(10.0, 0.125)) < 1e-12);
    QCOMPARE(table.number(0, "dimensions"), 1.0); // the zero lands in the first bin
    double far = 0;
    for (std::size_t i = 0; i < table.rows.size(); ++i)
        if (table.number(i, "bin from") >= 50) far += table.number(i, "dimensions");
    QCOMPARE(far, 2.0); // the two planted dimensions
    QCOMPARE(activationHistogram(record->maxAbsPerLayer[0], 1.0, 1.0, 8).rows.size(),
             std::size_t(0));
}

void PanelsTest::outliersFollowTheLayerSlider() {
    ActivationOutliersPanel panel;
    QAbstractItemModelTester tester(panel.histogramModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setActivations(recorded::activations());
    QCOMPARE(panel.axisScale(Qt::Horizontal), AxisScale::Log);
    QCOMPARE(panel.axisRange(Qt::Horizontal), qMakePair(0.1, 1000.0));
    auto* slider = panel.findChild<QSlider*>("layerSlider");
    QVERIFY(slider);
    QCOMPARE(slider->maximum(), 2);
    // 10^-1 .. 10^3 at 8 bins per decade: 32 bins, a step outline of 2 points per bin + 2 ends.
    QCOMPARE(panel.histogramModel()->rowCount(), 32);
    auto steps = panel.seriesPoints(ActivationOutliersPanel::Histogram);
    QCOMPARE(steps.size(), qsizetype(66));
    QCOMPARE(steps.front(), QPointF(0.1, 0));
    QCOMPARE(steps.back().y(), 0.0);
    double total = 0;
    for (qsizetype i = 1; i + 1 < steps.size(); i += 2) total += steps[i].y();
    QCOMPARE(total, 64.0);

    QSignalSpy changed(&panel, &ActivationOutliersPanel::layerChanged);
    auto binOf = [&](double value) {
        for (int row = 0; row < panel.histogramModel()->rowCount(); ++row)
            if (value >= panel.histogramModel()->number(row, 0) &&
                value < panel.histogramModel()->number(row, 1))
                return row;
        return -1;
    };
    int layer0Bin = binOf(100.0 * 1.0001);
    slider->setValue(2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(panel.layer(), 2);
    // Layer 2 has dimension 5 at 300, not 100: the histogram moved with the slider.
    QCOMPARE(panel.histogramModel()->number(layer0Bin, 2), 0.0);
    QCOMPARE(panel.histogramModel()->number(binOf(300.0), 2), 1.0);
    QVERIFY2(panel.summaryText().startsWith("Layer 2: dimension 17 reaches 400"),
             qPrintable(panel.summaryText()));
    auto tables = panel.dataTables();
    QCOMPARE(tables.size(), std::size_t(3));
    QVERIFY(tables[0].title.find("layer 2") != std::string::npos);
}

void PanelsTest::outlierTableFindsThePlantedDimensions() {
    auto table = outlierDimensions(*recorded::activations());
    QCOMPARE(table.rows.size(), std::size_t(3));
    for (std::size_t layer = 0; layer < 3; ++layer) {
        QCOMPARE(table.number(layer, "largest dimension"), 17.0);
        QCOMPARE(table.number(layer, "largest max |h|"), 400.0);
        QCOMPARE(std::get<std::string>(table.at(layer, "top 3 dimensions")).substr(0, 6),
                 std::string("17, 5,"));
        QVERIFY(table.number(layer, "largest / median") > 150); // the median sits near 1.25
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
        QVERIFY(image.width() >= 900 && image.height() >= 600);
        qInfo().noquote() << "panel screenshot:" << path;
    }
}

QTEST_MAIN(PanelsTest)
#include "test_panels.moc"
