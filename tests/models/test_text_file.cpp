// The capped text-file reader (perplexity corpus, factual battery), which refuses what is
// not a regular file (RegularFile), and the escaping of token bytes for display and JSON.
#include "models/formats/TextFile.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <fstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

    // What is not a regular file is refused at once, before open() could wait for a writer
    // (a FIFO) or read forever (/dev/zero), naming the kind.
    void devicesPipesSocketsAndFoldersAreRefusedAtOnce() {
        QCOMPARE(QString::fromStdString(errorOf("/dev/zero", 1 << 20)),
                 QString("/dev/zero: is a character device, not a regular file"));
        QCOMPARE(QString::fromStdString(errorOf("/dev/null", 1 << 20)),
                 QString("/dev/null: is a character device, not a regular file"));
        const std::filesystem::path fifo = dir_.filePath("pipe").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QCOMPARE(
            QString::fromStdString(errorOf(fifo, 100)),
            QString::fromStdString(fifo.string() + ": is a named pipe (FIFO), not a regular file"));
        const std::filesystem::path socketPath = dir_.filePath("socket").toStdString();
        const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
        QVERIFY(listener >= 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, socketPath.c_str(), sizeof address.sun_path - 1);
        QCOMPARE(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
        const std::string socketError = errorOf(socketPath, 100);
        ::close(listener);
        QCOMPARE(QString::fromStdString(socketError),
                 QString::fromStdString(socketPath.string() + ": is a socket, not a regular file"));
    }

    void permissionErrorsAreOneSentence() {
        if (::geteuid() == 0) QSKIP("root reads every file: no permission error to provoke");
        const std::filesystem::path file = dir_.filePath("private.txt").toStdString();
        std::ofstream(file) << "secret";
        std::filesystem::permissions(file, std::filesystem::perms::none);
        QCOMPARE(QString::fromStdString(errorOf(file, 100)),
                 QString::fromStdString(file.string() +
                                        ": permission denied: this user may not read it"));
    }

    void foldersAndMissingFilesAreNamed() {
        const std::filesystem::path folder = dir_.path().toStdString();
        QCOMPARE(QString::fromStdString(errorOf(folder, 100)),
                 QString::fromStdString(folder.string() + ": is a folder, not a file"));
        QCOMPARE(QString::fromStdString(errorOf(folder / "absent.txt", 100)),
                 QString::fromStdString((folder / "absent.txt").string() + ": no such file"));
    }

    // Text from a file for a terminal: escape sequences (ESC, the one-character CSI U+009B,
    // BEL) and a lone byte escaped, backslashes and characters kept; line breaks kept only
    // when asked.
    void printableTextEscapesControlCharacters() {
        QCOMPARE(printableText("Grüße \\ 🍺"), std::string("Grüße \\ 🍺"));
        QCOMPARE(printableText("a\x1b[2Jb\xc2\x9b"
                               "31m\x07"),
                 std::string("a\\x1b[2Jb\\xc2\\x9b31m\\x07"));
        QCOMPARE(printableText("\xc2\xa0"), std::string("\xc2\xa0")); // U+00A0 is no control
        QCOMPARE(printableText("x\xa0y"), std::string("x\\xa0y"));
        QCOMPARE(printableText("l1\nl2\tx\r"), std::string("l1\\nl2\\tx\\x0d"));
        QCOMPARE(printableText("l1\nl2\tx\r", true), std::string("l1\nl2\tx\\x0d"));
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
