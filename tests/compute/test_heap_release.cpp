// Large blocks freed inside a job go back to the system at once (HeapRelease.hpp).
#include "compute/HeapRelease.hpp"
#include "tests/ProcStatus.hpp"

#include <QtTest>

#include <memory>
#include <vector>

namespace {
long rssAnonKiB() {
    return inferscope::tests::procStatus("RssAnon:");
}
} // namespace

class HeapReleaseTest : public QObject {
    Q_OBJECT
private slots:
    void largeBlocksLeaveWhenFreed() {
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
        QSKIP("measures glibc's allocator; AddressSanitizer brings its own");
#endif
        using inferscope::compute::giveLargeBlocksTheirOwnPages;
        giveLargeBlocksTheirOwnPages();
        // glibc's dynamic threshold would rise to this block's size when it is freed, and
        // then keep the 4 MiB blocks below in its heap, pinned by the small blocks between.
        auto first = std::make_unique<char[]>(16u << 20);
        volatile char touched = first[4096];
        (void)touched;
        first.reset();
        inferscope::compute::releaseFreedHeapMemory();
        const long before = rssAnonKiB();
        QVERIFY(before > 0);
        std::vector<std::unique_ptr<char[]>> large, pins;
        for (int i = 0; i < 32; ++i) {
            large.push_back(std::make_unique<char[]>(4u << 20)); // zeroed: every page touched
            pins.push_back(std::make_unique<char[]>(256));
        }
        const long held = rssAnonKiB();
        QVERIFY2(held - before >= 120 * 1024,
                 qPrintable(QString("held %1 KiB").arg(held - before)));
        large.clear();
        const long after = rssAnonKiB();
        qInfo("RssAnon %ld KiB before, %ld with 128 MiB of blocks, %ld after freeing them", before,
              held, after);
        QVERIFY2(after - before < 8 * 1024,
                 qPrintable(QString("%1 KiB still resident").arg(after - before)));
    }
};

QTEST_GUILESS_MAIN(HeapReleaseTest)
#include "test_heap_release.moc"
