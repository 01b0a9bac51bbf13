// KvBlocksPanel over the block map of a KV cache built by hand (compute/engine/KvCache is
// pure bookkeeping): one square per block in the owner's, shared or free series, a mark on
// each partly filled last block, snapshots switchable, the scheduler's own tables left out,
// and PNG/SVG/CSV/JSON export through ChartExport.
#include "compute/experiments/serving/KvBlockMap.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;
using namespace inferscope::widgets;

namespace {
KvOwner ownerOf(SequenceId id) {
    return {"request " + std::to_string(id), std::int32_t(id - 1)};
}

// Blocks of 4, 16 in all. Snapshot "forked": sequence 1 (10 positions) forked into 2 (grown
// to 11): blocks 0-1 shared, 2 and 3 partly filled. Snapshot "later": sequence 3 of 8 joins.
std::vector<KvBlockSnapshot> handBuiltSnapshots() {
    KvCache cache(2, 1, 4, 4, 16, 8, 8);
    cache.reserve(1, 10);
    cache.forkPrefix(1, 2);
    cache.reserve(2, 11);
    std::vector<KvBlockSnapshot> snapshots{snapshotKvCache(cache, "forked", 0, 3, 32, ownerOf)};
    cache.reserve(3, 8);
    snapshots.push_back(snapshotKvCache(cache, "later", 1, 3, 32, ownerOf));
    return snapshots;
}
} // namespace

class KvBlocksPanelTest : public QObject {
    Q_OBJECT
private slots:
    void drawsEveryBlockOnce() {
        KvBlocksPanel panel;
        QVERIFY(!panel.hasData());
        auto tables = kvBlockMapTables(handBuiltSnapshots());
        Table policies;
        policies.id = "scheduler-policies"; // the Scheduler panel's, not this one's
        tables.insert(tables.begin(), policies);
        panel.setTables(tables);
        QCOMPARE(panel.dataTables().size(), std::size_t(3));
        QVERIFY(findTable(panel.dataTables(), "scheduler-policies") == nullptr);
        QCOMPARE(panel.snapshotBox()->count(), 2);
        QCOMPARE(panel.snapshot(), 0);

        auto count = [&](int series) { return int(panel.seriesPoints(series).size()); };
        QCOMPARE(count(KvBlocksPanel::Shared), 2);
        QCOMPARE(count(KvBlocksPanel::FirstOwner + 0), 1); // request 1's own block 2
        QCOMPARE(count(KvBlocksPanel::FirstOwner + 1), 1); // request 2's own block 3
        QCOMPARE(count(KvBlocksPanel::Free), 12);
        QCOMPARE(count(KvBlocksPanel::PartlyFilled), 2);
        int squares = 0;
        for (int s = KvBlocksPanel::FirstOwner; s <= KvBlocksPanel::Free; ++s)
            if (s != KvBlocksPanel::PartlyFilled) squares += count(s);
        QCOMPARE(squares, 16);
        // The partly filled marks sit on the owners' squares.
        for (const auto& p : panel.seriesPoints(KvBlocksPanel::PartlyFilled)) {
            const bool onOwner = panel.seriesPoints(KvBlocksPanel::FirstOwner).contains(p) ||
                                 panel.seriesPoints(KvBlocksPanel::FirstOwner + 1).contains(p);
            QVERIFY(onOwner);
        }
        QVERIFY(panel.summaryText().contains("4 of 16 blocks"));
        QCOMPARE(panel.mapModel()->rowCount(), 2);

        panel.setSnapshot(1); // request 3: two full blocks of its own
        QCOMPARE(count(KvBlocksPanel::FirstOwner + 2), 2);
        QCOMPARE(count(KvBlocksPanel::Free), 10);
        QCOMPARE(count(KvBlocksPanel::PartlyFilled), 2);
        QVERIFY(panel.summaryText().startsWith("later"));

        panel.clear();
        QVERIFY(!panel.hasData());
        QCOMPARE(panel.snapshotBox()->count(), 0);
    }

    void exportsLikeTheOthers() {
        KvBlocksPanel panel;
        panel.resize(800, 600);
        panel.setTables(kvBlockMapTables(handBuiltSnapshots()));
        QTemporaryDir dir;
        QString error;
        const auto files = ChartExport::exportAll(panel, QDir(dir.filePath("out")), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        for (const char* name : {"kv-blocks.png", "kv-blocks.svg", "kv-blocks.csv",
                                 "kv-blocks.json", "kv-blocks-kv-block-cells.csv"})
            QVERIFY2(QFile::exists(dir.filePath(QString("out/") + name)), name);
        QCOMPARE(files.size(), qsizetype(3 + panel.dataTables().size()));
        const QImage png(dir.filePath("out/kv-blocks.png"));
        QVERIFY(!png.isNull() && png.width() > 100 && png.height() > 100);
    }
};

QTEST_MAIN(KvBlocksPanelTest)
#include "test_kv_blocks_panel.moc"
