// SentencePiece-style BPE (Llama-2 / TinyLlama GGUF files): score-ordered merges, "▁" for
// spaces, the space prefix, <0xXX> byte fallback and the unknown token, on a handmade
// vocabulary and on a small real-format vocabulary whose ids llama.cpp recorded.
#include "models/ModelError.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace inferscope::models;

namespace {

const std::string kSpace = "\xE2\x96\x81"; // "▁"

// <unk>, <s>, </s>, then optionally the 256 byte tokens, then the pieces with their scores.
struct SpmVocabulary {
    TokenizerData data;
    std::int32_t id(const std::string& piece) const {
        for (std::size_t i = 0; i < data.tokens.size(); ++i) {
            if (data.tokens[i] == piece) return static_cast<std::int32_t>(i);
        }
        throw std::logic_error("no token " + piece);
    }
    std::vector<std::int32_t> ids(std::initializer_list<std::string> pieces) const {
        std::vector<std::int32_t> out;
        for (const std::string& piece : pieces) out.push_back(id(piece));
        return out;
    }
};

SpmVocabulary makeVocabulary(const std::vector<std::pair<std::string, float>>& pieces,
                             bool byteTokens = true) {
    SpmVocabulary vocabulary;
    TokenizerData& data = vocabulary.data;
    data.kind = TokenizerKind::SentencePieceBpe;
    const auto add = [&](const std::string& text, float score, TokenType type) {
        data.tokens.push_back(text);
        data.scores.push_back(score);
        data.tokenTypes.push_back(type);
    };
    add("<unk>", 0, TokenType::Unknown);
    add("<s>", 0, TokenType::Control);
    add("</s>", 0, TokenType::Control);
    if (byteTokens) {
        for (unsigned byte = 0; byte < 256; ++byte) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", byte);
            add(name, 0, TokenType::Byte);
        }
    }
    for (const auto& [piece, score] : pieces) add(piece, score, TokenType::Normal);
    data.unknownId = 0;
    data.bosId = 1;
    data.eosId = 2;
    data.addBos = true;
    data.addSpacePrefix = true;
    return vocabulary;
}

nlohmann::json readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
}

TokenizerData fixtureVocabulary(const nlohmann::json& fixture) {
    const auto& vocab = fixture.at("vocab");
    TokenizerData data;
    data.kind = TokenizerKind::SentencePieceBpe;
    data.tokens = vocab.at("tokens").get<std::vector<std::string>>();
    data.scores = vocab.at("scores").get<std::vector<float>>();
    for (int type : vocab.at("tokenTypes")) data.tokenTypes.push_back(static_cast<TokenType>(type));
    data.bosId = vocab.at("bosId").get<std::int32_t>();
    data.eosId = vocab.at("eosId").get<std::int32_t>();
    data.unknownId = vocab.at("unknownId").get<std::int32_t>();
    data.addBos = vocab.at("addBos").get<bool>();
    data.addSpacePrefix = vocab.at("addSpacePrefix").get<bool>();
    return data;
}

QString describe(const std::vector<std::int32_t>& ids) {
    QStringList parts;
    for (std::int32_t id : ids) parts << QString::number(id);
    return "[" + parts.join(", ") + "]";
}

} // namespace

class TestTokenizerSpm : public QObject {
    Q_OBJECT

private slots:
    // The merged piece with the higher score wins, wherever it is in the word.
    void mergesFollowScore() {
        const std::vector<std::pair<std::string, float>> base = {
            {kSpace, -100}, {"a", -100}, {"b", -100}, {"c", -100}};
        auto abFirst = base;
        abFirst.insert(abFirst.end(), {{kSpace + "a", -50}, {"ab", -1}, {"bc", -2}});
        const auto ab = makeVocabulary(abFirst);
        QCOMPARE(Tokenizer(ab.data).encode("abc", false), ab.ids({kSpace, "ab", "c"}));
        auto bcFirst = base;
        bcFirst.insert(bcFirst.end(), {{kSpace + "a", -50}, {"ab", -2}, {"bc", -1}});
        const auto bc = makeVocabulary(bcFirst);
        QCOMPARE(Tokenizer(bc.data).encode("abc", false), bc.ids({kSpace + "a", "bc"}));
    }

    void equalScoresMergeLeftmostFirst() {
        const auto vocabulary = makeVocabulary({{kSpace, -10}, {"a", -10}, {"aa", -1}});
        const Tokenizer tokenizer(vocabulary.data);
        QCOMPARE(tokenizer.encode("aaa", false), vocabulary.ids({kSpace, "aa", "a"}));
        QCOMPARE(tokenizer.encode("aaaa", false), vocabulary.ids({kSpace, "aa", "aa"}));
    }

    void spacesBecomeMarksWithAPrefix() {
        const auto vocabulary = makeVocabulary(
            {{kSpace, -10}, {"a", -10}, {"b", -10}, {kSpace + "a", -1}, {kSpace + "b", -1}});
        const Tokenizer tokenizer(vocabulary.data);
        QCOMPARE(tokenizer.encode("a b", false), vocabulary.ids({kSpace + "a", kSpace + "b"}));
        QCOMPARE(tokenizer.encode("a b"), (std::vector<std::int32_t>{1, vocabulary.id(kSpace + "a"),
                                                                     vocabulary.id(kSpace + "b")}));
        QCOMPARE(tokenizer.encode(" a", false), vocabulary.ids({kSpace, kSpace + "a"}));
        QCOMPARE(tokenizer.encode("", false), std::vector<std::int32_t>{});
        QCOMPARE(tokenizer.encode(""), std::vector<std::int32_t>{1});
        TokenizerData noPrefix = vocabulary.data;
        noPrefix.addSpacePrefix = false;
        QCOMPARE(Tokenizer(noPrefix).encode("a b", false), vocabulary.ids({"a", kSpace + "b"}));
        // Decoding drops the space the prefix added, and only that one.
        QCOMPARE(tokenizer.decode(tokenizer.encode("a b")), std::string("<s>a b"));
        QCOMPARE(tokenizer.decode(tokenizer.encode("a b"), true), std::string("a b"));
        QCOMPARE(tokenizer.decode(tokenizer.encode("  a", false)), std::string("  a"));
        QCOMPARE(Tokenizer(noPrefix).decode(Tokenizer(noPrefix).encode(" a", false)),
                 std::string(" a"));
    }

    void unknownCharactersFallBackToBytes() {
        const auto vocabulary = makeVocabulary({{kSpace, -10}, {"a", -10}});
        const Tokenizer tokenizer(vocabulary.data);
        // "é" is C3 A9; byte tokens <0x00>.. start at id 3.
        QCOMPARE(tokenizer.encode("\xC3\xA9", false),
                 (std::vector<std::int32_t>{vocabulary.id(kSpace), 3 + 0xC3, 3 + 0xA9}));
        QCOMPARE(tokenizer.pieceBytes(3 + 0x0A), std::string("\n"));
        QCOMPARE(tokenizer.tokenText(3 + 0x0A), std::string("<0x0A>"));
        for (const std::string text : {"\xC3\xA9t\xC3\xA9", "\xF0\x9F\x91\x8D a\n", "\xFF\xFE"}) {
            QCOMPARE(tokenizer.decode(tokenizer.encode(text, false)), text);
        }
    }

    void withoutByteTokensUnknownCharactersBecomeUnknown() {
        const auto vocabulary = makeVocabulary({{kSpace, -10}, {"a", -10}}, false);
        const Tokenizer tokenizer(vocabulary.data);
        QCOMPARE(tokenizer.encode("a\xC3\xA9"
                                  "a",
                                  false),
                 (std::vector<std::int32_t>{vocabulary.id(kSpace), vocabulary.id("a"), 0,
                                            vocabulary.id("a")}));
        QCOMPARE(tokenizer.decode(tokenizer.encode("a\xC3\xA9", false)), std::string("a<unk>"));
        QCOMPARE(tokenizer.decode(tokenizer.encode("a\xC3\xA9", false), true), std::string("a"));
    }

    // Special tokens written in the text: a "▁" prefix follows each one, as in llama.cpp,
    // and decoding removes it again.
    void specialTokensInText() {
        const auto vocabulary = makeVocabulary(
            {{kSpace, -10}, {"h", -10}, {"i", -10}, {kSpace + "h", -2}, {kSpace + "hi", -1}});
        const Tokenizer tokenizer(vocabulary.data);
        const auto hi = vocabulary.id(kSpace + "hi");
        QCOMPARE(tokenizer.encode("<s>hi</s>hi", false), (std::vector<std::int32_t>{1, hi, 2, hi}));
        QCOMPARE(tokenizer.decode(tokenizer.encode("<s>hi</s>hi", false)),
                 std::string("<s>hi</s>hi"));
        QCOMPARE(tokenizer.decode(tokenizer.encode("hi </s> hi", false)),
                 std::string("hi </s> hi"));
        const auto plain = tokenizer.encode("<s>hi", false, false);
        QVERIFY(std::find(plain.begin(), plain.end(), 1) == plain.end());
        QCOMPARE(tokenizer.decode(plain), std::string("<s>hi"));
        QCOMPARE(tokenizer.stopTokens(), std::vector<std::int32_t>{2});
    }

    void fixtureMatchesLlamaCpp() {
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-spm.json");
        const Tokenizer tokenizer(fixtureVocabulary(fixture));
        const auto& strings = fixture.at("strings");
        const auto& expected = fixture.at("ids");
        QVERIFY(strings.size() >= 40);
        QCOMPARE(strings.size(), expected.size());
        int matches = 0;
        for (std::size_t i = 0; i < strings.size(); ++i) {
            const auto text = strings[i].get<std::string>();
            const auto want = expected[i].get<std::vector<std::int32_t>>();
            const auto got = tokenizer.encode(text, false, true);
            if (got == want) {
                ++matches;
            } else {
                qWarning("#%zu %s: got %s, llama.cpp %s", i, nlohmann::json(text).dump().c_str(),
                         qPrintable(describe(got)), qPrintable(describe(want)));
            }
        }
        qInfo("%d of %d fixture strings match llama.cpp", matches, int(strings.size()));
        QCOMPARE(matches, int(strings.size()));

        const auto& withBos = fixture.at("withBos");
        for (std::size_t i = 0; i < withBos.at("strings").size(); ++i) {
            QCOMPARE(tokenizer.encode(withBos.at("strings")[i].get<std::string>()),
                     withBos.at("ids")[i].get<std::vector<std::int32_t>>());
        }
    }

    void fixtureRoundTrips() {
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-spm.json");
        const Tokenizer tokenizer(fixtureVocabulary(fixture));
        int checked = 0;
        for (const auto& entry : fixture.at("strings")) {
            const auto text = entry.get<std::string>();
            // A "▁" in the input is indistinguishable from an escaped space once encoded.
            if (text.find(kSpace) != std::string::npos) continue;
            QCOMPARE(QString::fromStdString(tokenizer.decode(tokenizer.encode(text, true, true))),
                     QString::fromStdString("<s>" + text));
            QCOMPARE(QString::fromStdString(tokenizer.decode(tokenizer.encode(text, false, false))),
                     QString::fromStdString(text));
            ++checked;
        }
        QVERIFY(checked >= 80);
    }

    // The committed GGUF is what llama.cpp read: its vocabulary must equal the JSON copy.
    void fixtureGgufHoldsTheSameVocabulary() {
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-spm.json");
        const TokenizerData fromJson = fixtureVocabulary(fixture);
        const GgufFile gguf = GgufFile::open(INFERSCOPE_TEST_DATA "/tokenizer-spm-vocab.gguf");
        QCOMPARE(gguf.getString("tokenizer.ggml.model"), std::optional<std::string>("llama"));
        QCOMPARE(gguf.getStringArray("tokenizer.ggml.tokens"),
                 std::optional<std::vector<std::string>>(fromJson.tokens));
        const auto scores = gguf.getNumberArray("tokenizer.ggml.scores");
        QVERIFY(scores.has_value());
        QCOMPARE(scores->size(), fromJson.scores.size());
        for (std::size_t i = 0; i < scores->size(); ++i) {
            QCOMPARE(static_cast<float>((*scores)[i]), fromJson.scores[i]);
        }
    }
};

QTEST_APPLESS_MAIN(TestTokenizerSpm)
#include "test_tokenizer_spm.moc"
