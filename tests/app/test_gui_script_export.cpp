// The scripted `inferscope --model M --run --export DIR` (ScriptRunner) on a small synthetic
// model: every panel it exports is a real chart (its series hold points, the image is not
// uniform), the figures hold no controls, the folder is created, and a panel it cannot fill
// is left out with a reason (issue 13 item 5). The same run is the projector walkthrough
// (issue 48 items 7 and 9): at scale 1.5 in a 1280 x 800 window, each panel in turn is shown,
// holds data, cuts no axis title, tick label or legend entry, and the window keeps its size.
#include "app/gui/CommandLine.hpp"
#include "app/gui/MainWindow.hpp"
#include "app/gui/ScriptRunner.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/TestTime.hpp"
#include "widgets/AttentionCostPanel.hpp"
#include "widgets/BatchingPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/ChartPanel.hpp"
#include "widgets/FigureTextCheck.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/MacCountsPanel.hpp"
#include "widgets/SchedulerPanel.hpp"
#include "widgets/SchemesPanel.hpp"
#include "widgets/SoftLabelsPanel.hpp"
#include "widgets/SpeculativePanel.hpp"

#include <QComboBox>
#include <QImage>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::gui;

namespace {
// Distinct colours on a grid over the image: a blank or one-colour image has one or two.
int coloursIn(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 5)
        for (int x = 0; x < image.width(); x += 5) colours.insert(image.pixel(x, y));
    return int(colours.size());
}

QString fileText(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}
} // namespace

class ScriptExportTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // settings go to a test location
        QCoreApplication::setOrganizationName("InferScope");
        QCoreApplication::setApplicationName("inferscope-script-test");
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 3;
        spec.hiddenSize = 128;
        spec.heads = 4;
        spec.kvHeads = 2;
        spec.headDim = 32;
        spec.ffnSize = 256;
        spec.vocabSize = 400;
        spec.outlierDims = {7, 90};
        modelPath_ = dir_.filePath("synthetic.gguf");
        models::writeSyntheticGguf(spec, modelPath_.toStdString());
    }
    void init() { QSettings().clear(); }

    void exportsEveryPanelAsARealChart() {
        MainWindow window; // the selector decides: a Vulkan device (lavapipe) comes first
        const bool vulkan = window.backendBox()->currentText().startsWith("Vulkan");
        qInfo().noquote() << "backend:" << window.backendBox()->currentText();
        window.setProperty("headless", true);
        window.resize(1280, 800);
        window.setPresentationScale(1.5);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        CommandLineOptions options;
        options.model = modelPath_;
        options.prompt = "the quick brown fox jumps over the lazy dog";
        options.chat = false;
        options.maxTokens = 8;
        options.run = true;
        options.exportFolder = dir_.filePath("not/yet/there"); // created by the export
        ScriptRunner script(window, options);
        QSignalSpy finished(&script, &ScriptRunner::finished);
        script.start();
        QVERIFY(finished.wait(inferscope::tests::scaledMs(240000)));
        QCOMPARE(finished.at(0).at(0).toInt(), 0);
        QVERIFY(QDir(options.exportFolder).exists());

        const auto files = script.exportedFiles();
        const auto leftOut = script.leftOut();
        if (vulkan) {
            QVERIFY2(leftOut.isEmpty(), qPrintable(QStringList(leftOut.keys()).join(", ")));
        } else { // the CPU reference has no GPU timestamps and serves one sequence: those
                 // panels are left out, and why
            QCOMPARE(leftOut.keys(), (QStringList{"batching", "kernel-timings", "replay",
                                                  "scheduler", "serve", "speculative"}));
            QVERIFY(leftOut.value("kernel-timings").contains("GPU timestamps"));
            QVERIFY(leftOut.value("batching").contains("GPU engine"));
        }
        for (auto* panel : window.panels()) {
            const QString stem = QDir(options.exportFolder).filePath(panel->panelId());
            if (leftOut.contains(panel->panelId())) {
                QVERIFY(!QFileInfo::exists(stem + ".png"));
                continue;
            }
            QVERIFY2(files.contains(stem + ".png"), qPrintable(stem));
            // A real chart: series with points, an image with more than a background.
            QVERIFY2(panel->hasData(), qPrintable(panel->panelId()));
            QVERIFY(!panel->dataTables().empty());
            QImage png(stem + ".png");
            QVERIFY2(!png.isNull() && png.width() > 100 && png.height() > 100, qPrintable(stem));
            QVERIFY2(coloursIn(png) > 8, qPrintable(stem));
            // One size for every figure, made for a report page, whatever the window's.
            QVERIFY2(png.width() == qRound(widgets::ChartExport::reportChartSize().width() *
                                           panel->devicePixelRatioF()),
                     qPrintable(stem + " " + QString::number(png.width())));
            // The figure is the chart, its title and the labels under it: no control's text
            // in the SVG. (Its height says nothing: a panel may be shorter than its figure,
            // whose notes are whole where the panel scrolls them.)
            const QString svg = fileText(stem + ".svg");
            QVERIFY2(svg.contains(panel->title().toHtmlEscaped()), qPrintable(stem));
            for (const char* control :
                 {"Run cached, then uncached", "Measure weight errors", "Measure quality",
                  "Exclude top K", "Tokens to generate", "Generate with", "Perplexity tokens"})
                QVERIFY2(!svg.contains(control), qPrintable(stem + ": " + control));
        }
        // The walkthrough: every panel shown as a class sees it.
        for (auto* panel : window.panels()) {
            window.showPanel(panel->panelId());
            QCoreApplication::processEvents();
            QCOMPARE(window.size(), QSize(1280, 800));
            if (leftOut.contains(panel->panelId())) continue;
            QVERIFY2(panel->hasData(), qPrintable(panel->panelId()));
            const auto cut = widgets::cutFigureTexts(window);
            QVERIFY2(cut.isEmpty(), qPrintable(panel->panelId() + ": " + cut.join("; ")));
        }
        // The script's steps filled what a plain run leaves empty.
        QVERIFY(window.panel<widgets::CachingPanel>("cached-vs-uncached")->hasData());
        QVERIFY(window.panel<widgets::SchemesPanel>("schemes")->hasData());
        QVERIFY(window.panel<widgets::AttentionCostPanel>("attention-cost")->hasData());
        QVERIFY(window.panel<widgets::SoftLabelsPanel>("soft-labels")->hasData());
        if (vulkan) {
            QVERIFY(window.panel<widgets::KernelTimingsPanel>("kernel-timings")->hasData());
            // The comparison ran on the engine: its counter and peak memory are in the export.
            QCOMPARE(window.panel<widgets::MacCountsPanel>("mac-counts")->dataTables().size(),
                     std::size_t(3));
            QVERIFY(window.panel<widgets::MacCountsPanel>("mac-counts")
                        ->summaryText()
                        .contains("equals the formula"));
            QVERIFY(window.panel<widgets::BatchingPanel>("batching")->hasData() &&
                    window.panel<widgets::SchedulerPanel>("scheduler")->hasData());
            // Speculation ran for real, and greedy output stayed the target's.
            const auto study = window.panel<widgets::SpeculativePanel>("speculative")->study();
            QVERIFY(study && !study->runs.empty());
            for (const auto& run : study->runs) QVERIFY(run.identicalToTarget);
        }
    }

    void panelsSayWhatToPressBeforeAnyRun() {
        MainWindow window(cpuBackendFactory());
        for (auto* panel : window.panels()) {
            // The memory budget is a calculator over the shipped presets: it needs no run.
            if (panel->panelId() == "memory-budget") {
                QVERIFY(panel->hasData());
                continue;
            }
            QVERIFY2(!panel->hasData(), qPrintable(panel->panelId()));
            QVERIFY2(!panel->emptyHint().isEmpty(), qPrintable(panel->panelId()));
        }
        // An export without --run leaves every measured chart out, saying why, and writes the
        // budget alone.
        CommandLineOptions options;
        options.exportFolder = dir_.filePath("empty-export");
        ScriptRunner script(window, options);
        QSignalSpy finished(&script, &ScriptRunner::finished);
        script.start();
        QVERIFY(finished.wait(inferscope::tests::scaledMs(20000)));
        QCOMPARE(finished.at(0).at(0).toInt(), 0);
        QCOMPARE(script.leftOut().size(), window.panels().size() - 1);
        QVERIFY(!script.leftOut().contains("memory-budget"));
        for (const auto& file : script.exportedFiles())
            QVERIFY2(QFileInfo(file).fileName().startsWith("memory-budget"), qPrintable(file));
        QVERIFY(script.leftOut().value("timings").contains("--run"));
    }

private:
    QTemporaryDir dir_;
    QString modelPath_;
};

QTEST_MAIN(ScriptExportTest)
#include "test_gui_script_export.moc"
