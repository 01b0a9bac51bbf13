// bytesOrderNote: the caption under `bench --formats` that says whether fewer bits per weight
// gave more decode tokens/s in that run, pair by pair, and whether an exception is noise.
#include "compute/experiments/bench/BytesOrder.hpp"

#include <QtTest>

using namespace inferscope::compute;

namespace {
bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
} // namespace

class TestBytesOrder : public QObject {
    Q_OBJECT
private slots:
    void saysOrderedWhenFewerBitsDecodeFaster() {
        // Given in no particular order: the note sorts by bits.
        const auto note = bytesOrderNote("batch 1, C = 256", {{"fp16", 16.0, 26.6, 26.5},
                                                              {"int4-row", 4.02, 56.1, 54.6},
                                                              {"int8-row", 8.02, 49.1, 46.9}});
        QVERIFY2(contains(note, "(batch 1, C = 256): int4-row 4.02 bits 54.6-56.1, int8-row "
                                "8.02 bits 46.9-49.1, fp16 16.00 bits 26.5-26.6"),
                 note.c_str());
        QVERIFY2(contains(note, "Ordered: in all 3 pairs"), note.c_str());
        QVERIFY2(!contains(note, "no spread"), note.c_str());
    }

    void namesEachPairOutOfOrderAndWhetherItIsNoise() {
        // q4_1 (5 bits) slower than int8-row (8 bits): its best lies below int8-row's worst.
        auto note = bytesOrderNote("batch 1, C = 16", {{"q4_1", 5.0, 45.5, 44.0},
                                                       {"int8-row", 8.02, 49.1, 46.9},
                                                       {"fp16", 16.0, 26.6, 26.5}});
        QVERIFY2(contains(note, "Not ordered in 1 of 3 pairs"), note.c_str());
        QVERIFY2(contains(note, "(1 beyond the repeats' spread)"), note.c_str());
        QVERIFY2(contains(note, "q4_1 (5.00 bits) no faster than int8-row (8.02 bits), beyond"),
                 note.c_str());
        // The same pair with overlapping ranges is within the spread.
        note = bytesOrderNote("batch 1, C = 16",
                              {{"q4_1", 5.0, 47.0, 44.0}, {"int8-row", 8.02, 49.1, 46.9}});
        QVERIFY2(contains(note, "Not ordered in 1 of 1 pairs"), note.c_str());
        QVERIFY2(contains(note, "(0 beyond the repeats' spread)"), note.c_str());
        QVERIFY2(contains(note, "no faster than int8-row (8.02 bits), within"), note.c_str());
    }

    void formatsCloseInBitsAreOneClass() {
        // int4-g128 (4.13 bits) faster than int4-row (4.02) and q4_1 (5.0) is no exception.
        const auto note = bytesOrderNote("batch 1, C = 16", {{"int4-row", 4.02, 50.0, 50.0},
                                                             {"int4-g128", 4.13, 55.0, 55.0},
                                                             {"q4_1", 5.0, 57, 57}});
        QVERIFY2(contains(note, "No two formats are at least 1.25x apart in bits"), note.c_str());
        QVERIFY2(contains(note, "one timed run each"), note.c_str());
    }

    void needsTwoFormats() {
        QVERIFY(bytesOrderNote("batch 1, C = 16", {}).empty());
        QVERIFY(bytesOrderNote("batch 1, C = 16", {{"fp16", 16.0, 30.0, 29.0}}).empty());
    }
};

QTEST_APPLESS_MAIN(TestBytesOrder)
#include "test_bytes_order.moc"
