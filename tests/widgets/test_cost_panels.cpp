// The panels of chapter items 1-3 and 14: the memory budget redraws from its controls (GPU
// size, precision, attention variant, context per user) and refuses a bad presets file; the
// single-head panel draws the table the CLI prints; the MAC panel follows the model's shape
// and checks the engine's counter of a recorded comparison; the speculative panel draws the
// formula over g from a study's alpha and c, the measured runs beside it, and says when
// greedy output differed from the target's.
#include "compute/experiments/attention/AttentionHeadCost.hpp"
#include "models/reference/OperationCounts.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/MacCountsPanel.hpp"
#include "widgets/MemoryBudgetPanel.hpp"
#include "widgets/SpeculativePanel.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace inferscope;
using namespace inferscope::widgets;
namespace ex = inferscope::compute::experiments;

namespace {

models::ModelConfig smallConfig() {
    models::ModelConfig c;
    c.layers = 2;
    c.hiddenSize = 64;
    c.heads = 4;
    c.kvHeads = 2;
    c.headDim = 16;
    c.ffnSize = 96;
    c.vocabSize = 300;
    return c;
}

// The note lines the CLI prints under its tables (compute::renderText, two spaces in), in
// table order, a note two tables share once.
QString printedNotes(const std::vector<compute::Table>& tables) {
    QStringList lines;
    for (const auto& table : tables) {
        const auto printed = QString::fromStdString(compute::renderText(table)).split('\n');
        // renderText ends each line with a newline: the notes are the lines before the last.
        const auto notes = printed.mid(printed.size() - 1 - qsizetype(table.notes.size()),
                                       qsizetype(table.notes.size()));
        for (const auto& line : notes) {
            const QString note = line.mid(2);
            if (!lines.contains(note)) lines << note;
        }
    }
    return lines.join('\n');
}

} // namespace

class CostPanelsTest : public QObject {
    Q_OBJECT
private slots:
    void budgetFollowsItsControls() {
        MemoryBudgetPanel panel;
        ex::ModelShape shape = ex::shapeOf(smallConfig(), 1'000'000, "small");
        panel.setLoadedModel(shape);
        QVERIFY(panel.hasData());
        QCOMPARE(panel.barCategories().front(), QString("small"));
        const auto tokensAt = [&](int row) { return panel.model()->number(row, 6); };
        panel.gpuBox()->setCurrentIndex(0); // 8 GiB
        const double small8 = tokensAt(0);
        // 2 x 2 layers x 2 KV heads x 16 x 2 bytes = 256 bytes per token at fp16.
        QCOMPARE(small8, std::floor((8.0 * (1 << 30) - 2'000'000) / 256));
        panel.gpuBox()->setCurrentIndex(1); // 16 GiB: more context
        QVERIFY(tokensAt(0) > small8);
        panel.variantBox()->setCurrentText("MHA"); // twice the KV heads: half the tokens
        const double mha = tokensAt(0);
        panel.variantBox()->setCurrentText("as built");
        QCOMPARE(mha, std::floor((16.0 * (1 << 30) - 2'000'000) / 512));
        panel.precisionBox()->setCurrentText("int4");
        QCOMPARE(panel.model()->number(0, 3), 500'000.0); // weight bytes
        panel.contextBox()->setValue(1'000'000);
        QCOMPARE(panel.model()->number(0, 7), std::floor(tokensAt(0) / 1'000'000));
        // The 70B preset at fp16 does not fit on 8 GiB: its bar sits at the floor.
        panel.precisionBox()->setCurrentText("fp16");
        panel.gpuBox()->setCurrentIndex(0);
        bool refused = false;
        for (int r = 0; r < panel.model()->rowCount(); ++r)
            refused |= panel.model()->number(r, 6) < 0;
        QVERIFY(refused);
        QVERIFY(panel.summaryText().contains("does not fit"));
        const auto tables = panel.dataTables();
        QCOMPARE(tables.size(), std::size_t(2));
    }

    // Issue 48 item 4: the budget's caveats (block formats cost more than 0.5 bytes per
    // weight, the reserve) stood only in the CLI's text and the JSON; now under the chart.
    void tableNotesShowUnderTheChart() {
        MemoryBudgetPanel panel;
        panel.setLoadedModel(ex::shapeOf(smallConfig(), 1'000'000, "small"));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString expected = printedNotes(panel.dataTables());
        QVERIFY(expected.contains("Weights at exactly 2, 1 or 0.5 bytes"));
        QTRY_COMPARE(panel.notesText(), expected);
        QVERIFY(panel.notesWidget()->isVisible());
        panel.gpuBox()->setCurrentIndex(1); // redrawn from its controls: the notes follow
        QTRY_COMPARE(panel.notesText(), printedNotes(panel.dataTables()));
    }

    void budgetRefusesABadPresetsFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        std::ofstream(path.toStdString()) << R"({"presets": [{"name": "x"}]})";
        MemoryBudgetPanel panel;
        const int rows = panel.model()->rowCount();
        QVERIFY(!panel.addPresets(path));
        QVERIFY(panel.errorText().contains("layers"));
        QCOMPARE(panel.model()->rowCount(), rows); // nothing lost
    }

    void attentionPanelDrawsTheTable() {
        std::vector<ex::AttentionHeadPoint> points(2);
        points[0] = {256, 256 * 256 * 4, 256 * 4, 2.0, 0.05, 1e-6f, 1e-6f, 64};
        points[1] = {512, 512 * 512 * 4, 512 * 4, 8.0, 0.1, 1e-6f, 1e-6f, 64};
        const std::vector<compute::Table> tables{ex::attentionHeadTable(points, 64, "test device")};
        AttentionCostPanel panel;
        QVERIFY(!panel.hasData());
        panel.setTables(tables);
        QVERIFY(panel.hasData());
        QCOMPARE(panel.seriesPoints(AttentionCostPanel::Uncached).size(), 2);
        QCOMPARE(panel.seriesPoints(AttentionCostPanel::Cached).back(), QPointF(512, 0.1));
        QVERIFY(panel.summaryText().contains("80x")); // 8 ms / 0.1 ms, from the table
        QCOMPARE(panel.lengths().back(), 2048u);
        panel.maxLengthBox()->setCurrentIndex(0);
        QCOMPARE(panel.lengths(), (std::vector<std::uint32_t>{256, 512}));
    }

    void macPanelFollowsTheModelAndTheCounter() {
        MacCountsPanel panel;
        QVERIFY(!panel.hasData());
        const auto config = smallConfig();
        panel.setModelConfig(config);
        QVERIFY(panel.hasData());
        panel.generatedBox()->setValue(64);
        const auto uncached = panel.seriesPoints(MacCountsPanel::UncachedAttention);
        QCOMPARE(uncached.back().x(), 64.0);
        QCOMPARE(uncached.back().y(),
                 double(models::generationMacs(config, 16, 64, false).attention));

        // A recorded comparison whose counter matches the formula, then one that does not.
        auto run = std::make_shared<compute::CachingComparison>();
        run->backend = "test";
        run->promptTokens = 3;
        run->cachedStepSeconds = {0.001};
        run->uncachedStepSeconds = {0.002};
        run->cachedTokens = {1, 2};
        run->uncachedTokens = {1, 2};
        run->cachedStepMacs = {models::forwardMacs(config, 0, 3),
                               models::forwardMacs(config, 3, 1)};
        run->uncachedStepMacs = {models::forwardMacs(config, 0, 3),
                                 models::forwardMacs(config, 0, 4)};
        panel.setComparison(run);
        QCOMPARE(panel.counterModel()->rowCount(), 2);
        QVERIFY(panel.summaryText().contains("equals the formula"));
        auto wrong = std::make_shared<compute::CachingComparison>(*run);
        wrong->uncachedStepMacs[1] = models::forwardMacs(config, 3, 1); // as if it had cached
        panel.setComparison(wrong);
        QVERIFY(panel.summaryText().contains("DISAGREES"));
        QCOMPARE(panel.dataTables().size(), std::size_t(2));
    }

    void speculativePanelDrawsFormulaAndRuns() {
        SpeculativePanel panel;
        QVERIFY(!panel.hasData());
        auto study = std::make_shared<ex::SpeculativeStudy>();
        study->target = "fp16";
        study->targetStepSeconds = 0.010;
        ex::DraftAgreement draft;
        draft.scheme = "int8-row";
        draft.agrees = {true, true, true, false};  // alpha 0.75
        draft.stepSeconds = {0.005, 0.005, 0.005}; // c 0.5
        study->drafts.push_back(draft);
        study->runDraft = "int8-row";
        study->targetAlone.tokens.assign(9, 1);
        study->targetAlone.stepSeconds.assign(8, 0.010);
        study->targetAlone.generateSeconds = 0.080; // 10 ms per token
        ex::SpeculativeRunSummary run;
        run.run.draftLength = 2;
        run.run.tokens.assign(9, 1);
        run.run.verifications = 4;
        run.run.reachedAt = {4, 3};
        run.run.acceptedAt = {3, 2};
        run.run.generateSeconds = 0.045; // 5 ms per token: 2x
        run.run.verifySeconds = 0.060;   // 15 ms per verification: v(2) = 1.5 target steps
        run.identicalToTarget = true;
        study->runs.push_back(run);
        panel.setStudy(study);
        QVERIFY(panel.hasData());
        const auto predicted = panel.seriesPoints(SpeculativePanel::Predicted);
        QCOMPARE(predicted.size(), 8);
        QVERIFY(std::fabs(predicted[1].y() - ex::speculativeSpeedup(0.75, 2, 0.5)) < 1e-9);
        const auto measured = panel.seriesPoints(SpeculativePanel::Measured);
        QCOMPARE(measured.size(), 1);
        QCOMPARE(measured[0], QPointF(2, 2.0));
        QCOMPARE(panel.seriesPoints(SpeculativePanel::BreakEven).front().y(), 1.0);
        // This device's prediction: verification at v(g) = 1.5 steps (one run: every g).
        const auto onDevice = panel.seriesPoints(SpeculativePanel::DevicePredicted);
        QCOMPARE(onDevice.size(), 8);
        QVERIFY(std::fabs(onDevice[1].y() - ex::speculativeSpeedupOnDevice(0.75, 2, 0.5, 1.5)) <
                1e-9);
        QVERIFY2(panel.summaryText().contains("v(2) = 1.50"), qPrintable(panel.summaryText()));
        QVERIFY2(panel.summaryText().contains("0.750") && panel.summaryText().contains("identical"),
                 qPrintable(panel.summaryText()));
        QCOMPARE(panel.acceptanceModel()->rowCount(), 1);
        QCOMPARE(panel.dataTables().size(), std::size_t(4));
        // Hidden, the panel reads its notes when asked: the formula's and the runs' notes.
        QCOMPARE(panel.notesText(), printedNotes(panel.dataTables()));
        QVERIFY(panel.notesText().contains("predicted: (1 - alpha^(g+1))"));
        QVERIFY(panel.notesText().contains("Why the two predictions part"));
        study->runs.front().identicalToTarget = false;
        panel.setStudy(study);
        QVERIFY(panel.summaryText().contains("DIFFERS"));
        panel.setStudy(nullptr);
        QVERIFY(!panel.hasData());
        QVERIFY(panel.dataTables().empty());
        QVERIFY(panel.notesText().isEmpty());
    }
};

QTEST_MAIN(CostPanelsTest)
#include "test_cost_panels.moc"
