// One source per chapter table (issue 14 item 2): the activation panels draw the tables that
// `inferscope-cli report activations` prints (compute::experiments::activationReport), cell
// by cell, for one recorded run.
#include "RecordedRun.hpp"
#include "compute/experiments/ActivationReport.hpp"
#include "widgets/ActivationOutliersPanel.hpp"
#include "widgets/QuantLevelsPanel.hpp"

#include <QSpinBox>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace inferscope;
using compute::Table;

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
};

QTEST_MAIN(OneSourceTest)
#include "test_one_source.moc"
