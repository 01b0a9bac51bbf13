// tokenizer.json files built and trained by the Hugging Face tokenizers library (fixture from
// scripts/make-hf-tokenizer-fixtures.py): our reader and tokenizer must give the library's ids
// and decoded text for every string, decomposed (NFD) input included, which only an applied
// NFC normalizer maps to the composed letters the merges know.
#include "models/ModelError.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/tokenizer/Tokenizer.hpp"
#include "models/tokenizer/UnicodeNormalization.hpp"

#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

using namespace inferscope::models;
using Json = nlohmann::json;

namespace {

Json readFixture() {
    std::ifstream in(INFERSCOPE_TEST_DATA "/hf-tokenizers.json", std::ios::binary);
    return Json::parse(in);
}

std::string idsText(const std::vector<std::int32_t>& ids) {
    std::string text;
    for (auto id : ids) text += std::to_string(id) + " ";
    return text;
}

} // namespace

class TestHfTokenizerFixtures : public QObject {
    Q_OBJECT
private slots:
    void composesToNfc();
    void idsAndTextEqualTheLibrary();
    void nfcChangesIdsOfDecomposedText();
    void refusesDecodersThatRenderOtherwise();
};

void TestHfTokenizerFixtures::composesToNfc() {
    using detail::composeNfc;
    QCOMPARE(composeNfc("cafe\xcc\x81"), std::string("caf\xc3\xa9"));
    QCOMPARE(composeNfc("plain ascii"), std::string("plain ascii"));
    // Hangul jamo compose to one syllable; the ohm sign is a singleton that NFC replaces.
    QCOMPARE(composeNfc("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8"), std::string("\xea\xb0\x81"));
    QCOMPARE(composeNfc("\xe2\x84\xa6"), std::string("\xce\xa9"));
    // Ill-formed UTF-8 comes back unchanged (the tokenizer handles its bytes).
    QCOMPARE(composeNfc("e\xcc\x81\xff"), std::string("e\xcc\x81\xff"));
}

void TestHfTokenizerFixtures::idsAndTextEqualTheLibrary() {
    const Json fixture = readFixture();
    QVERIFY(fixture.at("cases").size() >= 3);
    for (const Json& entry : fixture.at("cases")) {
        const std::string name = entry.at("name");
        const Tokenizer tokenizer(parseHfTokenizer(entry.at("tokenizer"), nullptr, name));
        QVERIFY2(tokenizer.data().normalizeNfc || name == "metaspace", name.c_str());
        for (const Json& string : entry.at("strings")) {
            const std::string text = string.at("text");
            const auto expected = string.at("ids").get<std::vector<std::int32_t>>();
            const auto ids = tokenizer.encode(text, false, true);
            QVERIFY2(ids == expected, (name + ": '" + text + "' gave " + idsText(ids) +
                                       "; the library gives " + idsText(expected))
                                          .c_str());
            for (const bool skipSpecial : {true, false}) {
                const std::string decoded = tokenizer.decode(ids, skipSpecial);
                const std::string expectedText =
                    string.at(skipSpecial ? "decoded" : "decodedWithSpecials");
                QVERIFY2(decoded == expectedText,
                         (name + ": '" + text + "' decodes to '" + decoded +
                          "'; the library gives '" + expectedText + "'")
                             .c_str());
            }
        }
    }
}

// The fixture is a real test of NFC only if decomposed text gives other ids without it.
void TestHfTokenizerFixtures::nfcChangesIdsOfDecomposedText() {
    const Json fixture = readFixture();
    for (const Json& entry : fixture.at("cases")) {
        TokenizerData data = parseHfTokenizer(entry.at("tokenizer"), nullptr, "fixture");
        if (!data.normalizeNfc) continue;
        const Tokenizer withNfc(data);
        data.normalizeNfc = false;
        const Tokenizer without(std::move(data));
        const std::string decomposed = "re\xcc\x81sume\xcc\x81";
        QCOMPARE(withNfc.encode(decomposed, false), withNfc.encode("r\xc3\xa9sum\xc3\xa9", false));
        QVERIFY(without.encode(decomposed, false) != withNfc.encode(decomposed, false));
    }
}

void TestHfTokenizerFixtures::refusesDecodersThatRenderOtherwise() {
    const Json fixture = readFixture();
    const Json* spm = nullptr;
    const Json* byteLevel = nullptr;
    for (const Json& entry : fixture.at("cases")) {
        if (entry.at("name") == "sentencepiece-nfc") spm = &entry.at("tokenizer");
        if (entry.at("name") == "byte-level-nfc") byteLevel = &entry.at("tokenizer");
    }
    QVERIFY(spm && byteLevel);
    auto refusedNaming = [](Json tokenizer, const Json& decoder, const std::string& field) {
        tokenizer["decoder"] = decoder;
        try {
            parseHfTokenizer(tokenizer, nullptr, "tokenizer.json");
            QFAIL(("accepted decoder " + decoder.dump()).c_str());
        } catch (const ModelError& error) {
            QVERIFY2(error.field() == field &&
                         error.reason().find("not supported") != std::string::npos,
                     error.what());
        }
    };
    const Json replace = {
        {"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}};
    const Json fallback = {{"type", "ByteFallback"}}, fuse = {{"type", "Fuse"}};
    const Json strip = {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}};
    auto sequence = [](const std::vector<Json>& steps) {
        Json node = {{"type", "Sequence"}, {"decoders", Json::array()}};
        for (const Json& step : steps) node["decoders"].push_back(step);
        return node;
    };
    // The space the encoder prepends must be stripped, "▁" must become a space, and only the
    // SentencePiece steps apply to a SentencePiece vocabulary.
    refusedNaming(*spm, sequence({replace, fallback, fuse}), "decoder");
    refusedNaming(*spm, sequence({fallback, fuse, strip}), "decoder");
    refusedNaming(*spm, sequence({replace, fallback, fuse, Json{{"type", "WordPiece"}}}),
                  "decoder[3]");
    Json twoSpaces = strip;
    twoSpaces["start"] = 2;
    refusedNaming(*spm, sequence({replace, fallback, fuse, twoSpaces}), "decoder[3]");
    refusedNaming(*spm, {{"type", "Metaspace"}, {"replacement", "\u2581"}}, "decoder[0]");
    refusedNaming(*byteLevel, {{"type", "Metaspace"}, {"replacement", "\u2581"}}, "decoder[0]");
    refusedNaming(*byteLevel, sequence({Json{{"type", "ByteLevel"}}, strip}), "decoder[1]");
    // Pre-tokenizer options our SentencePiece encoder does not apply.
    // The function's `fixture` (read above): a range over readFixture().at(...) would outlive
    // the temporary it points into (AddressSanitizer found the use after free).
    for (const Json& entry : fixture.at("cases")) {
        if (entry.at("name") != "metaspace") continue;
        Json split = entry.at("tokenizer");
        split["pre_tokenizer"]["split"] = true;
        try {
            parseHfTokenizer(split, nullptr, "tokenizer.json");
            QFAIL("accepted a Metaspace split");
        } catch (const ModelError& error) {
            QCOMPARE(error.field(), std::string("pre_tokenizer[0].split"));
        }
    }
    // The fixture's own decoders, and none at all, are accepted.
    Json none = *spm;
    none["decoder"] = nullptr;
    QCOMPARE(parseHfTokenizer(none, nullptr, "t").kind, TokenizerKind::SentencePieceBpe);
}

QTEST_APPLESS_MAIN(TestHfTokenizerFixtures)
#include "test_hf_tokenizer_fixtures.moc"
