// One source per chapter table (issue 14 item 2): the panels draw the tables that
// `inferscope-cli` prints, cell by cell, for one recorded run: the activation panels those of
// `report activations` (compute::experiments::activationReport); the prefill/decode, kernel,
// KV cache and caching panels those of `generate` (compute::experiments::RunTables).
#include "RecordedRun.hpp"
#include "compute/experiments/caching/CachingLab.hpp"
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "compute/experiments/run/RunTables.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/CachingPanel.hpp"
#include "widgets/KernelTimingsPanel.hpp"
#include "widgets/KvCachePanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"
#include "widgets/TimingsPanel.hpp"

#include <QSpinBox>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace inferscope;
using compute::Table;
namespace ex = compute::experiments;

namespace {
const Table& byId(const std::vector<Table>& tables, const std::string& id) {
    for (const auto& t : tables)
        if (t.id == id) return t;
    throw std::out_of_range("no table " + id);
}

// Identical: id, title, columns (name, unit, precision), every cell (type and value), notes.
void compareTables(const Table& panel, const Table& cli) {
    QCOMPARE(panel.id, cli.id);
    QCOMPARE(panel.title, cli.title);
    QCOMPARE(panel.columns.size(), cli.columns.size());
    for (std::size_t c = 0; c < cli.columns.size(); ++c) {
        QCOMPARE(panel.columns[c].name, cli.columns[c].name);
        QCOMPARE(panel.columns[c].unit, cli.columns[c].unit);
        QCOMPARE(panel.columns[c].precision, cli.columns[c].precision);
    }
    QCOMPARE(panel.rows.size(), cli.rows.size());
    for (std::size_t r = 0; r < cli.rows.size(); ++r)
        for (std::size_t c = 0; c < cli.columns.size(); ++c)
            QVERIFY2(panel.rows[r][c] == cli.rows[r][c],
                     qPrintable(QString("%1 row %2 column %3: %4 vs %5")
                                    .arg(QString::fromStdString(cli.id))
                                    .arg(r)
                                    .arg(QString::fromStdString(cli.columns[c].name))
                                    .arg(QString::fromStdString(
                                        compute::formatCell(panel.rows[r][c], cli.columns[c])))
                                    .arg(QString::fromStdString(
                                        compute::formatCell(cli.rows[r][c], cli.columns[c])))));
    QCOMPARE(panel.notes, cli.notes);
    QCOMPARE(compute::toJson(panel).dump(), compute::toJson(cli).dump());
}
} // namespace

class OneSourceTest : public QObject {
    Q_OBJECT
private slots:
    void activationPanelsDrawTheCliTables() {
        auto record = recorded::recordedStream();
        widgets::ActivationOutliersPanel outliers;
        widgets::QuantLevelsPanel levels;
        outliers.setActivations(record);
        levels.setActivations(record);
        levels.topKBox()->setValue(int(widgets::ActivationOutliersPanel::kTopDimensions));
        for (std::uint32_t layer = 0; layer < record->recording->layers; ++layer) {
            outliers.setLayer(int(layer));
            levels.setLayer(int(layer));
            compute::experiments::ActivationReportOptions options;
            options.layer = layer;
            options.topK = widgets::ActivationOutliersPanel::kTopDimensions;
            const auto cli = compute::experiments::activationReport(*record->recording, options);
            const auto drawn = outliers.dataTables();
            // Chapter item 9: the histogram (one binning rule) and the per-layer table.
            compareTables(byId(drawn, "activation-histogram"), byId(cli, "activation-histogram"));
            compareTables(byId(drawn, "activation-layers"), byId(cli, "activation-layers"));
            // Chapter item 10: the level counts.
            const auto counted = levels.dataTables();
            compareTables(byId(counted, "activation-levels"), byId(cli, "activation-levels"));
            compareTables(byId(counted, "activation-levels-per-dim"),
                          byId(cli, "activation-levels-per-dim"));
        }
        // And the chart shows the histogram's counts, bin for bin.
        const auto tables = outliers.dataTables();
        const auto& histogram = byId(tables, "activation-histogram");
        const auto bars = outliers.seriesPoints(widgets::ActivationOutliersPanel::Histogram);
        QVERIFY(std::size_t(bars.size()) >= histogram.rows.size());
        for (std::size_t row = 0; row < histogram.rows.size(); ++row)
            QCOMPARE(bars[qsizetype(row)].y(), histogram.number(row, "dimensions"));
    }

    // Chapter item 4: `generate` prints ex::timingsTable; the panel draws it, as the run
    // streams and once it is complete.
    void timingsPanelDrawsTheCliTable() {
        widgets::TimingsPanel panel;
        for (const auto& run : {recorded::partialRun(), recorded::run()}) {
            panel.setRun(run);
            const auto drawn = panel.dataTables();
            QCOMPARE(drawn.size(), std::size_t(1));
            const auto cli = ex::timingsTable(*run);
            QCOMPARE(cli.rows.size(), run->stepSeconds.size() + 1); // the prefill, then each step
            compareTables(drawn[0], cli);
            // The decode line is the table's decode rows, point for point (a 0 ms step sits
            // on the log axis' lower end).
            const auto decode = panel.seriesPoints(widgets::TimingsPanel::DecodeSteps);
            const double axisFloor = panel.axisRange(Qt::Vertical).first;
            QCOMPARE(std::size_t(decode.size()), run->stepSeconds.size());
            for (std::size_t step = 0; step < run->stepSeconds.size(); ++step) {
                const double time = cli.number(step + 1, "time");
                QCOMPARE(decode[qsizetype(step)].y(), time > 0 ? time : axisFloor);
            }
        }
    }

    // `generate --timings` prints ex::kernelTimingsTable; the panel's bars are its mean
    // per decode step (issue 48 item 6), which comes from the sum over every step.
    void kernelPanelDrawsTheCliTable() {
        const auto run = recorded::gpuRun();
        widgets::KernelTimingsPanel panel;
        panel.setRun(run);
        const auto drawn = panel.dataTables();
        QCOMPARE(drawn.size(), std::size_t(1));
        const auto cli = ex::kernelTimingsTable(*run);
        QCOMPARE(cli.rows.size(), run->decodeKernels.size());
        compareTables(drawn[0], cli);
        const auto bars = panel.seriesPoints(widgets::KernelTimingsPanel::DecodeStep);
        QCOMPARE(std::size_t(bars.size()), cli.rows.size());
        for (std::size_t row = 0; row < cli.rows.size(); ++row) {
            QCOMPARE(bars[qsizetype(row)].y(), cli.number(row, "decode mean"));
            const auto& total = run->decodeKernelsTotal[row];
            QCOMPARE(std::get<std::string>(cli.at(row, "kernel")), total.kernel);
            QCOMPARE(cli.number(row, "decode mean"),
                     total.microseconds / double(run->stepSeconds.size()));
        }
        // A run without profiling: no rows on either side.
        QVERIFY(ex::kernelTimingsTable(*recorded::run()).rows.empty());
    }

    // Chapter item 5: `generate --kv-cache` prints ex::kvCacheGrowthTable and, where the
    // backend counts per layer, ex::kvCachePerLayerTable; the panel draws both.
    void kvCachePanelDrawsTheCliTables() {
        const auto run = recorded::gpuRun();
        widgets::KvCachePanel panel;
        panel.setRun(run);
        const auto drawn = panel.dataTables();
        QCOMPARE(drawn.size(), std::size_t(2));
        const auto growth = ex::kvCacheGrowthTable(*run);
        const auto perLayer = ex::kvCachePerLayerTable(*run);
        QCOMPARE(growth.rows.size(), run->kvSamples.size());
        QCOMPARE(perLayer.rows.size(), run->kvUsedPerLayer.size());
        compareTables(drawn[0], growth);
        compareTables(drawn[1], perLayer);
        // The measured dots are the table's measured column (KiB).
        const auto measured = panel.seriesPoints(widgets::KvCachePanel::Measured);
        QCOMPARE(std::size_t(measured.size()), growth.rows.size());
        for (std::size_t row = 0; row < growth.rows.size(); ++row)
            QCOMPARE(measured[qsizetype(row)].y(), growth.number(row, "measured") / 1024.0);
    }

    // Chapter item 1: `generate --compare-cache` prints ex::cachingComparisonTable.
    void cachingPanelDrawsTheCliTable() {
        const auto comparison = recorded::comparison();
        widgets::CachingPanel panel;
        panel.setComparison(comparison);
        const auto drawn = panel.dataTables();
        QCOMPARE(drawn.size(), std::size_t(1));
        const auto cli = ex::cachingComparisonTable(*comparison);
        QCOMPARE(cli.rows.size(), comparison->cachedTokens.size());
        compareTables(drawn[0], cli);
        const auto uncached = panel.seriesPoints(widgets::CachingPanel::Uncached);
        QCOMPARE(std::size_t(uncached.size()), cli.rows.size());
        for (std::size_t row = 0; row < cli.rows.size(); ++row)
            QCOMPARE(uncached[qsizetype(row)].y(), cli.number(row, "uncached"));
    }
};

QTEST_MAIN(OneSourceTest)
#include "test_one_source.moc"
