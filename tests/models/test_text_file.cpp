// The capped text-file reader (perplexity corpus, factual battery) and the escaping of
// token bytes for display and JSON.
#include "models/formats/TextFile.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace inferscope::models;

namespace {

std::string errorOf(const std::filesystem::path& path, std::uint64_t cap) {
    try {
        readTextFile(path, cap);
    } catch (const TextFileError& error) {
        return error.what();
    }
    return "accepted";
}

} // namespace

class TestTextFile : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void readsFilesUpToTheCap() {
        const std::filesystem::path file = dir_.filePath("text.txt").toStdString();
        const std::string content = std::string("line one\nline two\0three", 24) + "\xff";
        std::ofstream(file, std::ios::binary) << content;
        QCOMPARE(readTextFile(file), content); // bytes unchanged, NULs and all
        QCOMPARE(readTextFile(file, content.size()), content);
        const std::string tooBig = errorOf(file, content.size() - 1);
        QVERIFY2(tooBig.starts_with(file.string() + ": larger than the 24 bytes allowed"),
                 tooBig.c_str());
        QVERIFY2(tooBig.find("(25 bytes)") != std::string::npos, tooBig.c_str());
        const std::filesystem::path empty = dir_.filePath("empty.txt").toStdString();
        std::ofstream(empty, std::ios::binary).flush();
        QCOMPARE(readTextFile(empty), std::string());
    }

    // A device has no size to check first: reading stops one byte past the cap.
    void devicesAreReadOnlyUpToTheCap() {
        const std::string zero = errorOf("/dev/zero", 1 << 20);
        QCOMPARE(QString::fromStdString(zero),
                 QString("/dev/zero: larger than the 1 MiB allowed for a text file"));
        QVERIFY(errorOf("/dev/zero", kMaxCorpusBytes).find("32 MiB") != std::string::npos);
        QCOMPARE(readTextFile("/dev/null"), std::string());
    }

    void foldersAndMissingFilesAreNamed() {
        const std::filesystem::path folder = dir_.path().toStdString();
        QCOMPARE(QString::fromStdString(errorOf(folder, 100)),
                 QString::fromStdString(folder.string() + ": is a folder, not a text file"));
        QCOMPARE(QString::fromStdString(errorOf(folder / "absent.txt", 100)),
                 QString::fromStdString((folder / "absent.txt").string() + ": no such file"));
    }

    void printableBytesKeepCharactersAndEscapeTheRest() {
        QCOMPARE(printableBytes("Grüße 🍺"), std::string("Grüße 🍺"));
        QCOMPARE(printableBytes("a\nb\tc\rd\\e"), std::string("a\\nb\\tc\\rd\\\\e"));
        // Half of "ü" (C3 BC), a lone continuation byte, DEL and NUL.
        QCOMPARE(printableBytes(std::string("\xc3", 1)), std::string("\\xc3"));
        QCOMPARE(printableBytes("\xbc"), std::string("\\xbc"));
        QCOMPARE(printableBytes(std::string("\x7f\x00", 2)), std::string("\\x7f\\x00"));
        // The first three bytes of the 4-byte emoji: each escaped.
        QCOMPARE(printableBytes("\xf0\x9f\x8d"), std::string("\\xf0\\x9f\\x8d"));
    }
};

QTEST_APPLESS_MAIN(TestTextFile)
#include "test_text_file.moc"
