// The lab panels the window added for the chapter's items 1, 5, 8-11, each fed a recorded
// run: kernel breakdown, cached vs uncached, paged KV blocks, outliers across layers, level
// counts per dimension, schemes side by side, and the shared selection they observe.
#include "RecordedRun.hpp"
#include "models/quant/WeightQuantizer.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/LabSelection.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/TableModel.hpp"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QtTest>

using namespace inferscope::widgets;

class LabPanelsTest : public QObject {
    Q_OBJECT
private slots:
    void kernelTimingsDrawOneBarPerKernel();
    void cachingPanelDrawsBothRunsAndTheRatio();
    void cachingPanelFlagsDifferentTokens();
    void kvCacheShowsAllocatedBlocksAndLayers();
    void outlierPersistenceShowsTheSameDimensionsInEveryLayer();
    void quantLevelsCountLevelsPerDimension();
    void quantLevelsFollowTopKAndLayer();
    void schemesJoinBothReportsSideBySide();
    void schemesPanelAsksForReports();
    void selectionEmitsOnlyOnChange();
};

void LabPanelsTest::kernelTimingsDrawOneBarPerKernel() {
    KernelTimingsPanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setRun(recorded::run()); // a CPU run: no kernels, the panel says how to get them
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(panel.summaryText().contains("profiling"));
    panel.setRun(recorded::gpuRun());
    QCOMPARE(panel.barCategories(),
             QStringList({"embed", "qkv_rope", "attention", "ffn_down", "lm_head"}));
    auto bars = panel.seriesPoints(KernelTimingsPanel::DecodeStep);
    QCOMPARE(bars.size(), qsizetype(5));
    // Issue 48 item 6: the mean over the run's 5 decode steps, not the last step alone.
    const double expected[] = {5.2, 152, 43, 202, 99.6};
    for (int i = 0; i < 5; ++i) QCOMPARE(bars[i].y(), expected[i]);
    auto table = panel.dataTables().at(0);
    double share = 0;
    for (std::size_t row = 0; row < table.rows.size(); ++row)
        share += table.number(row, "decode share");
    QCOMPARE(share, 100.0);
    QCOMPARE(table.number(1, "prefill"), 900.0);
    QCOMPARE(table.number(1, "decode dispatches"), 30.0);
    QVERIFY2(panel.summaryText().contains("over 5 steps: 502 µs") &&
                 panel.summaryText().contains("the last step alone: 500 µs"),
             qPrintable(panel.summaryText()));
    // No bandwidth figures in this run: no claim about what bounds the step.
    QVERIFY(!panel.summaryText().contains("bound by memory bandwidth"));
    QVERIFY(panel.summaryText().contains("no bandwidth measurement"));
    // With them, the claim follows the numbers: the matrix kernels (qkv_rope, ffn_down here:
    // 354 µs in the mean step) read 3.5 MB, 9.9 GB/s: against 12.5 GB/s that is 79%, bound ...
    auto measured = std::make_shared<inferscope::widgets::RunRecord>(*recorded::gpuRun());
    measured->decodeWeightBytes = 3'500'000;
    measured->readBytesPerSecond = 12.5e9;
    panel.setRun(measured);
    QVERIFY2(panel.summaryText().contains("9.9 GB/s, 79% of the 12.5 GB/s") &&
                 panel.summaryText().contains(": bound by memory bandwidth"),
             qPrintable(panel.summaryText()));
    // On CPU devices the engine runs attention inside qkv_rope and labels the dispatch
    // qkv_rope_attention: still a matrix kernel, else its bytes would count and its time not.
    auto fusedLabel = std::make_shared<inferscope::widgets::RunRecord>(*measured);
    for (auto& kernel : fusedLabel->decodeKernels)
        if (kernel.kernel == "qkv_rope") kernel.kernel = "qkv_rope_attention";
    panel.setRun(fusedLabel);
    QVERIFY2(panel.summaryText().contains("9.9 GB/s, 79% of the 12.5 GB/s"),
             qPrintable(panel.summaryText()));
    // ... against 50 GB/s it is 20%: not bound.
    measured = std::make_shared<inferscope::widgets::RunRecord>(*measured);
    measured->readBytesPerSecond = 50e9;
    panel.setRun(measured);
    QVERIFY2(panel.summaryText().contains("not bound by memory bandwidth"),
             qPrintable(panel.summaryText()));
    // A later run on the same backend with profiling off keeps the profiled bars, and says
    // where they are from.
    auto unprofiled = std::make_shared<inferscope::widgets::RunRecord>(*recorded::gpuRun());
    unprofiled->prefillKernels.clear();
    unprofiled->decodeKernels.clear();
    panel.setRun(unprofiled);
    QCOMPARE(panel.barCategories().size(), qsizetype(5));
    QVERIFY2(panel.summaryText().startsWith("From the last profiled run"),
             qPrintable(panel.summaryText()));
    panel.setRun(nullptr); // a new model clears it
    QCOMPARE(panel.model()->rowCount(), 0);
}

void LabPanelsTest::cachingPanelDrawsBothRunsAndTheRatio() {
    CachingPanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(panel.dataTables().empty());
    panel.setComparison(recorded::comparison());
    auto cached = panel.seriesPoints(CachingPanel::Cached);
    auto uncached = panel.seriesPoints(CachingPanel::Uncached);
    QCOMPARE(cached.size(), qsizetype(5));
    QCOMPARE(uncached.size(), qsizetype(5));
    QCOMPARE(cached[0], QPointF(1, 40)); // token 1 comes from the prefill
    QCOMPARE(uncached[0], QPointF(1, 40));
    QCOMPARE(cached[4], QPointF(5, 10));
    QCOMPARE(uncached[4], QPointF(5, 52)); // recomputing the sequence: each step costs more
    QCOMPARE(panel.axisScale(Qt::Vertical), AxisScale::Log);
    const QString summary = panel.summaryText();
    QVERIFY2(summary.contains("80.0 ms") && summary.contains("230.0 ms"), qPrintable(summary));
    QVERIFY(summary.contains("identical"));
    auto table = panel.dataTables().at(0);
    QCOMPARE(table.rows.size(), std::size_t(5));
    QCOMPARE(std::get<std::string>(table.at(4, "same token")), std::string("yes"));
    QVERIFY(table.notes.at(0).find("ratio 2.8") != std::string::npos);

    // Not attached to a job runner: the run button waits (the window test runs it for real).
    QVERIFY(!panel.runButton()->isEnabled());
    QCOMPARE(panel.run(48), quint64(0));
}

void LabPanelsTest::cachingPanelFlagsDifferentTokens() {
    auto c = std::make_shared<CachingComparison>(*recorded::comparison());
    c->uncachedTokens[3] = 99;
    CachingPanel panel;
    panel.setComparison(c);
    QVERIFY2(panel.summaryText().contains("DIFFER"), qPrintable(panel.summaryText()));
    auto table = panel.dataTables().at(0);
    QCOMPARE(std::get<std::string>(table.at(3, "same token")), std::string("no"));
    QCOMPARE(std::get<std::string>(table.at(2, "same token")), std::string("yes"));
}

void LabPanelsTest::kvCacheShowsAllocatedBlocksAndLayers() {
    KvCachePanel panel;
    QAbstractItemModelTester tester(panel.perLayerModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.setRun(recorded::gpuRun());
    auto measured = panel.seriesPoints(KvCachePanel::Measured);
    auto fp16 = panel.seriesPoints(KvCachePanel::FormulaFp16);
    auto allocated = panel.seriesPoints(KvCachePanel::Allocated);
    QCOMPARE(allocated.size(), qsizetype(6));
    for (qsizetype i = 0; i < measured.size(); ++i) {
        QCOMPARE(measured[i], fp16[i]); // fp16 elements: on the chapter's 23,040 B/token
        const double tokens = measured[i].x();
        const double blocks = std::ceil(tokens / 16);
        QCOMPARE(allocated[i].y(), 23040.0 * 16 * blocks / 1024.0); // whole blocks
    }
    QCOMPARE(allocated[4].y(), allocated[0].y()); // 12..16 tokens: one block
    QVERIFY(allocated[5].y() > allocated[4].y()); // the 17th token opens a second
    QVERIFY2(panel.summaryText().contains("2 blocks of 16 positions in use (of 256)"),
             qPrintable(panel.summaryText()));
    QCOMPARE(panel.perLayerModel()->rowCount(), 30);
    QCOMPARE(panel.perLayerModel()->number(29, 1), 768.0 * 17);
    QCOMPARE(panel.perLayerModel()->number(29, 2), 768.0 * 32);
    auto tables = panel.dataTables();
    QCOMPARE(tables.size(), std::size_t(2));
    QCOMPARE(tables[0].number(5, "blocks in use"), 2.0);
    QCOMPARE(tables[1].id, std::string("kv-cache-per-layer"));
}

void LabPanelsTest::outlierPersistenceShowsTheSameDimensionsInEveryLayer() {
    auto table = outlierPersistence(recorded::activations()->maxAbsPerLayer, 4);
    QCOMPARE(table.columns.size(), std::size_t(5));         // layer + 4 dimensions
    QCOMPARE(table.columns[1].name, std::string("dim 17")); // in every layer's top, largest peak
    QCOMPARE(table.columns[2].name, std::string("dim 5"));
    QCOMPARE(table.rows.size(), std::size_t(3));
    for (std::size_t layer = 0; layer < 3; ++layer) {
        QVERIFY(table.number(layer, "dim 17") > 150); // 400 over a median near 1.25
        QVERIFY(table.number(layer, "dim 5") > 50);
        QVERIFY(table.number(layer, table.columns[3].name) < 2); // the rest stay near 1x
    }
    QVERIFY(table.number(2, "dim 5") > table.number(0, "dim 5")); // 300 vs 100

    ActivationOutliersPanel panel;
    panel.setActivations(recorded::activations());
    QCOMPARE(panel.persistenceModel()->rowCount(), 3);
    QCOMPARE(panel.persistenceModel()->columnCount(), 9); // layer + 8 dimensions
    auto* view = panel.findChild<QTableView*>("persistenceView");
    QVERIFY(view && view->model() == panel.persistenceModel());
    QVERIFY(!view->toolTip().isEmpty());
    QCOMPARE(panel.dataTables().back().id, std::string("outlier-persistence"));
}

void LabPanelsTest::quantLevelsCountLevelsPerDimension() {
    auto record = recorded::recordedStream();
    auto table = levelsByDimension(*record->recording, 0, 1);
    QCOMPARE(table.rows.size(), std::size_t(8));
    // Rank 0 is the outlier dimension 0, then 7, 6, ... 1 by their max |h|.
    QCOMPARE(table.number(0, "dimension"), 0.0);
    QCOMPARE(table.number(1, "dimension"), 7.0);
    QCOMPARE(table.number(7, "dimension"), 1.0);
    // One scale (100 / 127): the outlier uses 4 levels, dimension 7 only +-1, dimension 1 only 0.
    QCOMPARE(table.number(0, "int8 one scale"), 4.0);
    QCOMPARE(table.number(1, "int8 one scale"), 2.0);
    QCOMPARE(table.number(7, "int8 one scale"), 1.0);
    QCOMPARE(table.number(1, "int4 one scale"), 1.0);
    // Top 1 excluded (scale 1 / 127): every other dimension resolves its 4 values.
    QVERIFY(std::holds_alternative<std::monostate>(table.at(0, "int8 top-k excluded")));
    for (std::size_t rank = 1; rank < 8; ++rank)
        QCOMPARE(table.number(rank, "int8 top-k excluded"), 4.0);
    QCOMPARE(table.number(1, "int4 top-k excluded"), 4.0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, levelsByDimension(*record->recording, 2, 1));

    QuantLevelsPanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.topKBox()->setValue(1);
    panel.setActivations(record);
    auto oneScale = panel.seriesPoints(QuantLevelsPanel::Int8Tensor);
    auto excluded = panel.seriesPoints(QuantLevelsPanel::Int8Excluded);
    QCOMPARE(oneScale.size(), qsizetype(8));
    QCOMPARE(excluded.size(), qsizetype(7)); // the excluded dimension has no point
    QCOMPARE(oneScale[0], QPointF(0, 4));
    QCOMPARE(excluded[0], QPointF(1, 4));
    QCOMPARE(panel.axisScale(Qt::Vertical), AxisScale::Log);
    QVERIFY2(panel.summaryText().contains("with the top 1 excluded"),
             qPrintable(panel.summaryText()));
    // 4 positions recorded: the panel states that ceiling on the counts.
    QVERIFY2(panel.summaryText().contains("ceiling: 4 prompt positions"),
             qPrintable(panel.summaryText()));
    auto tables = panel.dataTables();
    QCOMPARE(tables.front().id, std::string("activation-levels-by-dimension"));
    bool sawReport = false;
    for (const auto& t : tables) sawReport |= t.id == "activation-levels";
    QVERIFY(sawReport); // experiments::activationReport's tensor-wide counts ride along
}

void LabPanelsTest::quantLevelsFollowTopKAndLayer() {
    QuantLevelsPanel panel;
    QSignalSpy layerChanged(&panel, &QuantLevelsPanel::layerChanged);
    panel.setActivations(recorded::recordedStream());
    panel.topKBox()->setValue(2); // dimensions 0 and 7 kept aside
    auto excluded = panel.seriesPoints(QuantLevelsPanel::Int8Excluded);
    QCOMPARE(excluded.size(), qsizetype(6));
    QCOMPARE(excluded.front().x(), 2.0);
    QVERIFY(panel.topKBox()->maximum() == 7);
    panel.setLayer(1);
    QCOMPARE(panel.layer(), 1);
    QCOMPARE(layerChanged.count(), 1);
    QVERIFY(panel.dataTables().front().title.find("layer 1") != std::string::npos);
    // Layer 1 is layer 0 doubled: the same counts (levels do not depend on the scale's size).
    QCOMPARE(panel.model()->number(0, 3), 4.0);
    panel.setActivations(nullptr);
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(panel.dataTables().empty());
}

void LabPanelsTest::schemesJoinBothReportsSideBySide() {
    SchemesPanel panel;
    QAbstractItemModelTester tester(panel.model(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(panel.dataTables().empty());
    panel.setWeightReport(recorded::weightTables());
    QCOMPARE(panel.barCategories(), QStringList({"fp16", "int8-row", "int4-tensor"}));
    auto bars = panel.seriesPoints(SchemesPanel::Values);
    QCOMPARE(bars[1].y(), 0.4); // mean error 0.004 as a percentage
    QCOMPARE(bars[2].y(), 25.0);
    QVERIFY(panel.axisTitle(Qt::Vertical).contains("weight error"));

    panel.setQualityReport(recorded::qualityTables());
    QCOMPARE(panel.barCategories(), QStringList({"fp16", "int4-tensor"})); // perplexity measured
    bars = panel.seriesPoints(SchemesPanel::Values);
    QCOMPARE(bars[0].y(), 9.5);
    QCOMPARE(bars[1].y(), 31.0);
    QVERIFY(panel.axisTitle(Qt::Vertical).contains("perplexity"));
    auto table = panel.dataTables().at(0);
    QCOMPARE(table.id, std::string("scheme-comparison"));
    QCOMPARE(table.rows.size(), std::size_t(3));
    QCOMPARE(table.number(2, "worst error"), 90.0);
    QCOMPARE(table.number(2, "agreement"), 61.1);
    // Quality columns say what they count: agreement with fp32 over the report's 144 tokens.
    QCOMPARE(table.columns[table.columnIndex("agreement")].unit,
             std::string("% of 144 tokens, vs fp32"));
    QCOMPARE(table.columns[table.columnIndex("battery (penalty 1.1)")].unit,
             std::string("correct"));
    QCOMPARE(panel.axisScale(Qt::Vertical), AxisScale::Log); // perplexity spans decades
    QVERIFY(std::holds_alternative<std::monostate>(table.at(1, "perplexity")));
    QCOMPARE(panel.dataTables().size(), std::size_t(3)); // the join, then both reports
    QVERIFY2(panel.summaryText().contains("best fp16"), qPrintable(panel.summaryText()));
    // Issue 48 item 6: a rerun with fewer schemes adds to the table, it does not wipe it.
    auto rerun = recorded::qualityTables();
    rerun[0].rows.erase(rerun[0].rows.begin()); // int4-tensor alone, re-measured
    rerun[0].rows[0][2] = 30.0;
    panel.setQualityReport(rerun);
    QCOMPARE(panel.barCategories(), QStringList({"fp16", "int4-tensor"}));
    QCOMPARE(panel.seriesPoints(SchemesPanel::Values)[1].y(), 30.0);
    QCOMPARE(panel.model()->rowCount(), 3);
    auto fewer = recorded::weightTables();
    fewer[0].rows.resize(1); // fp16 alone
    panel.setWeightReport(fewer);
    QCOMPARE(panel.model()->rowCount(), 3);
    QCOMPARE(panel.dataTables().at(1).rows.size(), std::size_t(3));
    // Another measurement (other notes: another text length) stands alone.
    auto other = recorded::qualityTables();
    other[0].notes = {"perplexity over 64 tokens"};
    other[0].rows.resize(1);
    panel.setQualityReport(other);
    QCOMPARE(panel.barCategories(), QStringList({"fp16"}));
    panel.clearReports();
    QVERIFY(panel.dataTables().empty());
}

void LabPanelsTest::schemesPanelAsksForReports() {
    SchemesPanel panel;
    QCOMPARE(SchemesPanel::allSchemes().size(),
             qsizetype(inferscope::models::standardQuantSchemes().size()));
    QVERIFY(SchemesPanel::allSchemes().contains("nf4-b64"));
    QCOMPARE(panel.checkedSchemes(), SchemesPanel::allSchemes()); // all ticked at first
    panel.setCheckedSchemes({"nf4-b64", "fp16"});
    QCOMPARE(panel.checkedSchemes(), QStringList({"fp16", "nf4-b64"})); // in the lab's order
    // Not attached to a job runner: both report buttons wait (the window test runs them).
    QVERIFY(!panel.weightButton()->isEnabled());
    QVERIFY(!panel.qualityButton()->isEnabled());
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.runWeightReport(panel.checkedSchemes()), quint64(0));
    // A name the lab does not know is refused before any job, and said.
    QSignalSpy ended(&panel, &LabPanel::jobEnded);
    QCOMPARE(panel.runWeightReport({"int3-magic"}), quint64(0));
    QCOMPARE(ended.count(), 1);
    QCOMPARE(ended.at(0).at(1).toBool(), false);

    QSignalSpy current(&panel, &SchemesPanel::currentSchemeChanged);
    panel.setCurrentScheme("int4-g128");
    QCOMPARE(panel.currentScheme(), QString("int4-g128"));
    QCOMPARE(current.count(), 1);
    panel.setGenerationScheme("int4-row", false);
    auto* note = panel.findChild<QLabel*>("generationSchemeNote");
    QVERIFY(note->text().contains("host-analysis only"));
    QCOMPARE(panel.generationBox()->currentText(), QString("int4-row"));
    panel.setGenerationScheme("fp16", true);
    QVERIFY(!note->text().contains("host-analysis"));
}

void LabPanelsTest::selectionEmitsOnlyOnChange() {
    LabSelection selection;
    QSignalSpy layer(&selection, &LabSelection::layerChanged);
    QSignalSpy scheme(&selection, &LabSelection::schemeChanged);
    selection.setLayer(3);
    selection.setLayer(3);
    selection.setScheme("nf4-b64");
    selection.setScheme("nf4-b64");
    QCOMPARE(layer.count(), 1);
    QCOMPARE(scheme.count(), 1);
    QCOMPARE(selection.layer(), 3);
    QCOMPARE(selection.scheme(), QString("nf4-b64"));

    // Two panels wired through it follow each other without echo loops.
    ActivationOutliersPanel outliers;
    QuantLevelsPanel levels;
    QObject::connect(&outliers, &ActivationOutliersPanel::layerChanged, &selection,
                     &LabSelection::setLayer);
    QObject::connect(&levels, &QuantLevelsPanel::layerChanged, &selection, &LabSelection::setLayer);
    QObject::connect(&selection, &LabSelection::layerChanged, &outliers,
                     &ActivationOutliersPanel::setLayer);
    QObject::connect(&selection, &LabSelection::layerChanged, &levels, &QuantLevelsPanel::setLayer);
    outliers.setActivations(recorded::recordedStream());
    levels.setActivations(recorded::recordedStream());
    selection.setLayer(0);
    levels.setLayer(1);
    QCOMPARE(selection.layer(), 1);
    QCOMPARE(outliers.layer(), 1);
}

QTEST_MAIN(LabPanelsTest)
#include "test_lab_panels.moc"
