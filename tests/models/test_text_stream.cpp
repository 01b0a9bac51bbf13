// TextStream, the generation's text token by token: the pieces it hands on, joined, are
// decode() of the tokens (special tokens in between included, skipped or not), it never hands
// on part of a UTF-8 character, and each token costs one piece, not a decode of the whole text.
#include "models/LoadedModel.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/tokenizer/TextStream.hpp"

#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope::models;

namespace {
bool completeUtf8(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (i + length > text.size()) return false;
        i += length;
    }
    return true;
}
} // namespace

class TestTextStream : public QObject {
    Q_OBJECT
private slots:
    void piecesJoinToTheDecodedText() {
        QTemporaryDir dir;
        SyntheticModelSpec spec;
        const auto path = std::filesystem::path(dir.filePath("model.gguf").toStdString());
        writeSyntheticGguf(spec, path);
        const auto model = loadModel(path);
        const Tokenizer tokenizer(model.tokenizer);
        // Multi-byte characters the byte-level tokenizer splits over several tokens, and chat
        // markers between the text (decode's state between tokens resets after them).
        const std::string text = "<|im_start|>user\nna\xC3\xAFve caf\xC3\xA9 \xF0\x9F\x98\x80 "
                                 "\xE2\x82\xAC"
                                 "5<|im_end|>\n<|im_start|>assistant\nok";
        const auto ids = tokenizer.encode(text, true, true);
        QVERIFY(ids.size() > 10);
        for (bool skipSpecial : {true, false}) {
            TextStream stream(tokenizer, skipSpecial);
            std::string joined;
            std::size_t heldBack = 0;
            for (const auto id : ids) {
                const auto piece = stream.add(id);
                QVERIFY2(completeUtf8(piece), piece.c_str());
                heldBack += stream.pending().empty() ? 0 : 1;
                joined += piece;
            }
            QVERIFY(stream.pending().empty()); // the text ends on a whole character
            QCOMPARE(joined, tokenizer.decode(ids, skipSpecial));
            QVERIFY2(heldBack > 0, "no token split a character: the test says nothing");
        }
    }
};

QTEST_APPLESS_MAIN(TestTextStream)
#include "test_text_stream.moc"
