// KvBlocksPanel over the block map of a KV cache built by hand (compute/engine/KvCache is
// pure bookkeeping): one pool cell per physical block, shared blocks hatched with their
// reference count written, partly filled blocks with a dotted tail, the block tables equal to
// the cache's and pointing at the pool cells they hold, snapshots switchable, the scheduler's
// own tables left out, and PNG/SVG/CSV/JSON export through ChartExport.
#include "RecordedRun.hpp"
#include "compute/experiments/serving/KvBlockMap.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/KvBlocksFigure.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/TableModel.hpp"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

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

// The size the lab shows: 256 blocks of 16 positions, eight sequences of a skewed mix, two of
// them forked from a third's prompt.
std::vector<KvBlockSnapshot> chapterSizedSnapshot() {
    KvCache cache(2, 1, 4, 16, 256, 16, 16);
    const std::uint32_t lengths[] = {239, 21, 70, 9, 130, 44, 17};
    for (std::uint32_t i = 0; i < 7; ++i) cache.reserve(i + 1, lengths[i]);
    cache.forkPrefix(3, 8);
    cache.reserve(8, 75);
    return {snapshotKvCache(cache, "continuous step 41 (peak blocks)", 40, 8, 4096, ownerOf)};
}
} // namespace

class KvBlocksPanelTest : public QObject {
    Q_OBJECT
private slots:
    void drawsEveryBlockOnce() {
        KvBlocksPanel panel;
        QVERIFY(!panel.hasData());
        const auto snapshots = handBuiltSnapshots();
        auto tables = kvBlockMapTables(snapshots);
        Table policies;
        policies.id = "scheduler-policies"; // the Scheduler panel's, not this one's
        tables.insert(tables.begin(), policies);
        panel.setTables(tables);
        QCOMPARE(panel.dataTables().size(), std::size_t(3));
        QVERIFY(findTable(panel.dataTables(), "scheduler-policies") == nullptr);
        QCOMPARE(panel.snapshotBox()->count(), 2);
        QCOMPARE(panel.snapshot(), 0);
        QVERIFY(panel.hasData());

        // One cell per physical block, in block order.
        const auto* figure = panel.figure();
        const auto& cells = figure->poolCells();
        QCOMPARE(cells.size(), std::size_t(16));
        for (std::size_t b = 0; b < cells.size(); ++b) QCOMPARE(cells[b].block, int(b));
        auto count = [&](auto predicate) {
            return int(std::count_if(cells.begin(), cells.end(), predicate));
        };
        // Blocks 0-1 shared by the fork: hatched, their reference count written.
        QCOMPARE(count([](const KvPoolCell& c) { return c.references == 2; }), 2);
        for (const auto& c : cells) {
            if (c.references > 1) {
                QCOMPARE(KvBlocksFigure::poolText(c), QString::number(c.references));
                QCOMPARE(figure->patternOf(c).style(), Qt::DiagCrossPattern);
            } else {
                QVERIFY(KvBlocksFigure::poolText(c).isEmpty());
            }
            if (c.references == 0) QCOMPARE(figure->fillOf(c).style(), Qt::NoBrush);
        }
        QCOMPARE(count([](const KvPoolCell& c) { return c.references == 0; }), 12);
        // Blocks 2 and 3, each its sequence's partly filled last block: a dotted tail.
        QCOMPARE(count([](const KvPoolCell& c) { return c.references == 1 && c.fill < 1; }), 2);
        for (const auto& c : cells)
            if (c.references == 1 && c.fill < 1)
                QCOMPARE(figure->patternOf(c).style(), Qt::Dense6Pattern);

        // The block tables are the engine's, and point at pool cells that they hold.
        const auto& rows = figure->tableRows();
        QCOMPARE(rows.size(), snapshots[0].sequences.size());
        for (std::size_t r = 0; r < rows.size(); ++r) {
            const auto& sequence = snapshots[0].sequences[r];
            QCOMPARE(rows[r].owner, QString::fromStdString(sequence.owner));
            QCOMPARE(rows[r].slot, sequence.slot);
            QCOMPARE(rows[r].blocks.size(), sequence.blocks.size());
            for (std::size_t i = 0; i < rows[r].blocks.size(); ++i) {
                QCOMPARE(rows[r].blocks[i], int(sequence.blocks[i]));
                const auto& cell = cells.at(std::size_t(rows[r].blocks[i]));
                QVERIFY(cell.references >= 1);
                if (cell.references == 1) {
                    QCOMPARE(cell.owner, int(r));
                    QCOMPARE(figure->fillOf(cell).color(), figure->rowColour(int(r)));
                }
            }
        }
        QCOMPARE(rows[0].blocks.front(), rows[1].blocks.front()); // the shared prefix
        QVERIFY(figure->rowColour(0) != figure->rowColour(1));
        QVERIFY(panel.summaryText().contains("4 of 16 blocks"));
        QCOMPARE(panel.mapModel()->rowCount(), 2);

        panel.setSnapshot(1); // request 3: two full blocks of its own
        QCOMPARE(figure->tableRows().size(), std::size_t(3));
        QCOMPARE(figure->tableRows()[2].blocks.size(), std::size_t(2));
        for (int block : figure->tableRows()[2].blocks) {
            QCOMPARE(figure->poolCells().at(std::size_t(block)).owner, 2);
            QCOMPARE(figure->poolCells().at(std::size_t(block)).fill, 1.0);
        }
        QCOMPARE(int(std::count_if(figure->poolCells().begin(), figure->poolCells().end(),
                                   [](const KvPoolCell& c) { return c.references == 0; })),
                 10);
        QVERIFY(panel.summaryText().startsWith("later"));

        panel.clear();
        QVERIFY(!panel.hasData());
        QCOMPARE(panel.snapshotBox()->count(), 0);
        QVERIFY(panel.figure()->poolCells().empty());
    }

    void exportsLikeTheOthers() {
        KvBlocksPanel panel;
        panel.setPresentationScale(1.5);
        panel.resize(1200, 700);
        panel.setTables(kvBlockMapTables(chapterSizedSnapshot()));
        QCOMPARE(panel.figure()->poolCells().size(), std::size_t(256));
        QCOMPARE(panel.figure()->tableRows().size(), std::size_t(8));
        QTemporaryDir dir;
        QString error;
        const auto files = ChartExport::exportAll(panel, QDir(dir.filePath("out")), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // A copy to look at, beside the test (build/tests/artifacts).
        QVERIFY(ChartExport::writePng(
                    panel, QDir(recorded::artifactDirectory()).filePath("panel-kv-blocks.png"))
                    .isEmpty());
        for (const char* name : {"kv-blocks.png", "kv-blocks.svg", "kv-blocks.csv",
                                 "kv-blocks.json", "kv-blocks-kv-block-cells.csv"})
            QVERIFY2(QFile::exists(dir.filePath(QString("out/") + name)), name);
        QCOMPARE(files.size(), qsizetype(3 + panel.dataTables().size()));
        // The export has room for the whole pool, with a number in every cell.
        auto pool = panel.figure()->poolLayout();
        QCOMPARE(pool.shownRows, pool.rows);
        QCOMPARE(pool.columns * pool.rows >= 256, true);
        QVERIFY2(pool.cell >= pool.legibleCell, qPrintable(QString::number(pool.cell)));
        // In the window at scale 1.5 (the deck's width beside the controls): still a number
        // in every cell, the free rows after the last used block folded, no used block hidden.
        panel.resize(740, 900);
        panel.figure()->grab();
        pool = panel.figure()->poolLayout();
        QVERIFY2(pool.cell >= pool.legibleCell, qPrintable(QString::number(pool.cell)));
        int lastUsed = 0;
        for (const auto& c : panel.figure()->poolCells())
            if (c.references > 0) lastUsed = c.block;
        QVERIFY(lastUsed / pool.columns < pool.shownRows);
        QVERIFY(pool.shownRows < pool.rows);
        const QImage png(dir.filePath("out/kv-blocks.png"));
        QVERIFY(!png.isNull() && png.width() > 100 && png.height() > 100);
    }
};

QTEST_MAIN(KvBlocksPanelTest)
#include "test_kv_blocks_panel.moc"
