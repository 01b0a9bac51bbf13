// Byte-level BPE on small handmade vocabularies: the GPT-2 byte table, the split rules,
// merge order, special tokens, BOS/EOS, decoding and the errors a bad vocabulary raises.
#include "models/ModelError.hpp"
#include "models/tokenizer/ByteLevelBpe.hpp"
#include "models/tokenizer/PreTokenizer.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <QtTest>

#include <chrono>
#include <set>

using namespace inferscope::models;
using inferscope::models::detail::PreTokenizer;

namespace {

// The vocabulary text of a byte string: each byte as its GPT-2 code point.
std::string mapped(std::string_view bytes) {
    std::string text;
    for (char byte : bytes) text += detail::byteToMappedUtf8(static_cast<unsigned char>(byte));
    return text;
}

// All 256 byte tokens (ids 0..255 in byte order, except those in missingBytes), then the
// results of the merges in merge order, then the given extra tokens. Merges are written
// over raw bytes: "a b" merges "a" and "b", " h" would be written with a leading space.
struct BpeVocabulary {
    TokenizerData data;
    std::int32_t id(std::string_view bytes) const {
        const std::string text = mapped(bytes);
        for (std::size_t i = 0; i < data.tokens.size(); ++i) {
            if (data.tokens[i] == text) return static_cast<std::int32_t>(i);
        }
        throw std::logic_error("no token " + std::string(bytes));
    }
    std::int32_t special(std::string_view text) const {
        for (std::size_t i = 0; i < data.tokens.size(); ++i) {
            if (data.tokens[i] == text) return static_cast<std::int32_t>(i);
        }
        throw std::logic_error("no token " + std::string(text));
    }
    std::vector<std::int32_t> ids(std::initializer_list<std::string_view> pieces) const {
        std::vector<std::int32_t> out;
        for (std::string_view piece : pieces) out.push_back(id(piece));
        return out;
    }
};

BpeVocabulary makeVocabulary(const std::vector<std::pair<std::string, std::string>>& merges,
                             const std::string& preTokenizer = "gpt-2",
                             const std::set<unsigned char>& missingBytes = {}) {
    BpeVocabulary vocabulary;
    TokenizerData& data = vocabulary.data;
    data.kind = TokenizerKind::ByteLevelBpe;
    data.preTokenizer = preTokenizer;
    for (unsigned byte = 0; byte < 256; ++byte) {
        if (missingBytes.count(static_cast<unsigned char>(byte))) continue;
        data.tokens.push_back(mapped(std::string(1, static_cast<char>(byte))));
    }
    for (const auto& [left, right] : merges) {
        data.merges.push_back(mapped(left) + " " + mapped(right));
        const std::string result = mapped(left + right);
        if (std::find(data.tokens.begin(), data.tokens.end(), result) == data.tokens.end()) {
            data.tokens.push_back(result);
        }
    }
    data.tokenTypes.assign(data.tokens.size(), TokenType::Normal);
    return vocabulary;
}

void addSpecial(BpeVocabulary& vocabulary, const std::string& text, TokenType type) {
    vocabulary.data.tokens.push_back(text);
    vocabulary.data.tokenTypes.push_back(type);
}

std::vector<std::string> splitWith(const std::string& rule, std::string_view text) {
    const PreTokenizer preTokenizer(rule);
    std::vector<std::string> pieces;
    for (std::string_view piece : preTokenizer.split(text)) pieces.emplace_back(piece);
    return pieces;
}

using Pieces = std::vector<std::string>;

} // namespace

class TestTokenizerBpe : public QObject {
    Q_OBJECT

private slots:
    void byteTableIsGpt2s() {
        // Printable bytes stand for themselves; the rest count up from U+0100 in byte order.
        QCOMPARE(detail::byteToCodePoint('A'), U'A');
        QCOMPARE(detail::byteToCodePoint('!'), U'!');
        QCOMPARE(detail::byteToCodePoint(0xE9), char32_t(0xE9));
        QCOMPARE(detail::byteToCodePoint(0x00), char32_t(0x100));
        QCOMPARE(detail::byteToCodePoint(' '), char32_t(0x120));  // "Ġ"
        QCOMPARE(detail::byteToCodePoint('\n'), char32_t(0x10A)); // "Ċ"
        QCOMPARE(detail::byteToCodePoint(0x7F), char32_t(0x121));
        QCOMPARE(detail::byteToCodePoint(0xAD), char32_t(0x143)); // the 68th and last: "Ń"
        QCOMPARE(detail::byteToMappedUtf8(' '), std::string("\xC4\xA0"));
        std::set<char32_t> seen;
        for (unsigned byte = 0; byte < 256; ++byte) {
            const char32_t codePoint = detail::byteToCodePoint(static_cast<unsigned char>(byte));
            QVERIFY(codePoint < 0x144);
            seen.insert(codePoint);
            QCOMPARE(detail::codePointToByte(codePoint), std::optional<unsigned char>(byte));
        }
        QCOMPARE(seen.size(), std::size_t(256));
        QVERIFY(!detail::codePointToByte(0x144));
        QVERIFY(!detail::codePointToByte(U'\u2581'));
        QCOMPARE(detail::mappedTextToBytes("\xC4\xA0the\xC4\x8A"), std::string(" the\n"));
    }

    void smollmSplitsDigitsFirst() {
        QCOMPARE(splitWith("smollm", "hello123 world  \n\n"),
                 (Pieces{"hello", "1", "2", "3", " world", "  \n\n"}));
        QCOMPARE(splitWith("smollm", "In 1969, x2"),
                 (Pieces{"In", " ", "1", "9", "6", "9", ",", " x", "2"}));
        QCOMPARE(splitWith("smollm", "\xC2\xB2\xE2\x85\xAB"), // "²Ⅻ": numbers too
                 (Pieces{"\xC2\xB2", "\xE2\x85\xAB"}));
    }

    void gpt2Words() {
        QCOMPARE(splitWith("gpt-2", "hello123 world  \n\n"),
                 (Pieces{"hello", "123", " world", "  \n\n"}));
        QCOMPARE(splitWith("gpt-2", "I'm here  now!!"),
                 (Pieces{"I", "'m", " here", " ", " now", "!!"}));
        // Only a plain space joins the next word; other whitespace stands alone.
        QCOMPARE(splitWith("gpt-2", "a\tb  \tc"), (Pieces{"a", "\t", "b", "  ", "\t", "c"}));
        QCOMPARE(splitWith("gpt-2", "don't DON'T"), (Pieces{"don", "'t", " DON", "'", "T"}));
        QCOMPARE(splitWith("gpt-2", "na\xC3\xAFve \xE6\x9D\xB1\xE4\xBA\xAC"), // naïve 東京
                 (Pieces{"na\xC3\xAFve", " \xE6\x9D\xB1\xE4\xBA\xAC"}));
        QCOMPARE(splitWith("gpt-2", " "), (Pieces{" "}));
        QCOMPARE(splitWith("gpt-2", ""), Pieces{});
        // U+180E is not White_Space (PCRE2's \s would say it is): it starts a symbol run.
        QCOMPARE(splitWith("gpt-2", "a\xE1\xA0\x8E's"), (Pieces{"a", "\xE1\xA0\x8E'", "s"}));
        // U+3000 IDEOGRAPHIC SPACE is White_Space.
        QCOMPARE(splitWith("gpt-2", "x\xE3\x80\x80\xE3\x80\x80y"),
                 (Pieces{"x", "\xE3\x80\x80", "\xE3\x80\x80", "y"}));
    }

    void llama3AndQwen2Words() {
        QCOMPARE(splitWith("llama-bpe", "1234567 I'M\n\nok"),
                 (Pieces{"123", "456", "7", " I", "'M", "\n\n", "ok"}));
        QCOMPARE(splitWith("llama-bpe", "(hello) \n  x"),
                 (Pieces{"(hello", ")", " \n", " ", " x"}));
        QCOMPARE(splitWith("qwen2", "1234 ab"), (Pieces{"1", "2", "3", "4", " ab"}));
    }

    void defaultSplitsPunctuationFirst() {
        QCOMPARE(splitWith("default", "a+b=c, 12345"),
                 (Pieces{"a", "+", "b", "=", "c", ",", " ", "123", "45"}));
    }

    void unknownRuleIsRefused() {
        QVERIFY(PreTokenizer::isKnown("smollm"));
        QVERIFY(!PreTokenizer::isKnown("tekken"));
        QVERIFY_THROWS_EXCEPTION(ModelError, PreTokenizer("no-such-rule"));
        BpeVocabulary vocabulary = makeVocabulary({}, "no-such-rule");
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer(vocabulary.data));
    }

    // The lowest rank merges first, whatever the position in the word.
    void mergesFollowRank() {
        const auto bcFirst = makeVocabulary({{"b", "c"}, {"a", "b"}});
        QCOMPARE(Tokenizer(bcFirst.data).encode("abc"), bcFirst.ids({"a", "bc"}));
        const auto abFirst = makeVocabulary({{"a", "b"}, {"b", "c"}});
        QCOMPARE(Tokenizer(abFirst.data).encode("abc"), abFirst.ids({"ab", "c"}));
        const auto chain = makeVocabulary({{"l", "l"}, {"h", "e"}, {"he", "ll"}, {"hell", "o"}});
        QCOMPARE(Tokenizer(chain.data).encode("hello hel"), chain.ids({"hello", " ", "he", "l"}));
    }

    // Equal ranks (the same pair twice) merge leftmost first.
    void equalRanksMergeLeftmostFirst() {
        const auto pairs = makeVocabulary({{"a", "a"}});
        const Tokenizer tokenizer(pairs.data);
        QCOMPARE(tokenizer.encode("aaa"), pairs.ids({"aa", "a"}));
        QCOMPARE(tokenizer.encode("aaaaa"), pairs.ids({"aa", "aa", "a"}));
        const auto quads = makeVocabulary({{"a", "a"}, {"aa", "aa"}});
        QCOMPARE(Tokenizer(quads.data).encode("aaaaaa"), quads.ids({"aaaa", "aa"}));
    }

    // Merges never cross a pre-tokenizer boundary; spaces travel as "Ġ".
    void mergesStayInsidePieces() {
        const auto vocabulary = makeVocabulary({{" ", "w"}, {"o", "w"}, {" w", "ow"}, {"w", "o"}});
        const Tokenizer tokenizer(vocabulary.data);
        // "wow": "o w" outranks "w o", and "w ow" is no merge.
        QCOMPARE(tokenizer.encode("wow wow"), vocabulary.ids({"w", "ow", " wow"}));
        QCOMPARE(tokenizer.tokenText(vocabulary.id(" wow")), std::string("\xC4\xA0wow"));
        QCOMPARE(tokenizer.pieceBytes(vocabulary.id(" wow")), std::string(" wow"));
    }

    void roundTripsAnyValidText() {
        const auto vocabulary = makeVocabulary({{"t", "h"}, {"th", "e"}, {" ", "the"}});
        const Tokenizer tokenizer(vocabulary.data);
        const std::vector<std::string> texts = {
            "",
            "the",
            " the\n\tthe  ",
            "Caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x91\x8D",
            std::string("nul\0byte", 8),
            "\r\n\r\n",
            "\x01\x02\x7F",
        };
        for (const std::string& text : texts) {
            QCOMPARE(tokenizer.decode(tokenizer.encode(text)), text);
        }
        QCOMPARE(tokenizer.encode(" the"), vocabulary.ids({" the"}));
        // Every byte value below 0x80 gets its own token.
        std::string ascii;
        for (int byte = 0; byte < 0x80; ++byte) ascii += static_cast<char>(byte);
        QCOMPARE(tokenizer.decode(tokenizer.encode(ascii)), ascii);
    }

    // Like llama.cpp, bytes that are not UTF-8 become U+FFFD, one per byte, before splitting.
    void invalidUtf8BecomesReplacementCharacters() {
        const auto vocabulary = makeVocabulary({});
        const Tokenizer tokenizer(vocabulary.data);
        const std::string replacement = "\xEF\xBF\xBD";
        QCOMPARE(tokenizer.decode(tokenizer.encode("\xFF"
                                                   "ab\xC3")),
                 replacement + "ab" + replacement);
        QCOMPARE(tokenizer.decode(tokenizer.encode("\xE2\x82"
                                                   "A")),
                 replacement + replacement + "A");
        QCOMPARE(tokenizer.decode(tokenizer.encode("\xC0\x80")), replacement + replacement);
        QCOMPARE(tokenizer.decode(tokenizer.encode("\xED\xA0\x80")),
                 replacement + replacement + replacement);
    }

    // A byte the vocabulary lacks is dropped, as llama.cpp drops it.
    void missingByteIsDropped() {
        const auto vocabulary = makeVocabulary({{"a", "b"}}, "gpt-2", {0x01});
        const Tokenizer tokenizer(vocabulary.data);
        QCOMPARE(tokenizer.encode("ab\x01"
                                  "ab"),
                 vocabulary.ids({"ab", "ab"}));
    }

    void specialTokensAreSplitOutFirst() {
        auto vocabulary = makeVocabulary({{"h", "i"}, {"<", "|"}});
        addSpecial(vocabulary, "<|im_start|>", TokenType::Control);
        addSpecial(vocabulary, "<|im_end|>", TokenType::Control);
        addSpecial(vocabulary, "<|im", TokenType::Control); // shorter: tried after the others
        addSpecial(vocabulary, "<tool>", TokenType::UserDefined);
        const auto start = vocabulary.special("<|im_start|>");
        const auto end = vocabulary.special("<|im_end|>");
        const auto shortOne = vocabulary.special("<|im");
        const auto tool = vocabulary.special("<tool>");
        const Tokenizer tokenizer(vocabulary.data);
        const auto hi = vocabulary.id("hi");

        QCOMPARE(tokenizer.encode("<|im_start|>hi<|im_end|>"),
                 (std::vector<std::int32_t>{start, hi, end}));
        QCOMPARE(tokenizer.encode("<|im_start|><|im_start|>"),
                 (std::vector<std::int32_t>{start, start}));
        QCOMPARE(tokenizer.encode("hi<|im_x"),
                 (std::vector<std::int32_t>{hi, shortOne, vocabulary.id("_"), vocabulary.id("x")}));
        QCOMPARE(tokenizer.encode("<tool>hi"), (std::vector<std::int32_t>{tool, hi}));

        // Without parseSpecial, control tokens stay text; user-defined ones are still matched.
        const auto plain = tokenizer.encode("<|im_start|>hi<tool>", true, false);
        QVERIFY(std::find(plain.begin(), plain.end(), start) == plain.end());
        QVERIFY(std::find(plain.begin(), plain.end(), shortOne) == plain.end());
        QCOMPARE(plain.front(), vocabulary.id("<|"));
        QCOMPARE(plain.back(), tool);
        QCOMPARE(tokenizer.decode(plain), std::string("<|im_start|>hi<tool>"));

        QVERIFY(tokenizer.isControl(start));
        QVERIFY(!tokenizer.isControl(tool));
        QVERIFY(!tokenizer.isControl(hi));
        const std::vector<std::int32_t> ids = {start, hi, tool, end};
        QCOMPARE(tokenizer.decode(ids), std::string("<|im_start|>hi<tool><|im_end|>"));
        QCOMPARE(tokenizer.decode(ids, true), std::string("hi<tool>"));
    }

    void bosAndEosFollowTheModel() {
        auto vocabulary = makeVocabulary({});
        addSpecial(vocabulary, "<|endoftext|>", TokenType::Control);
        addSpecial(vocabulary, "<|im_end|>", TokenType::Control);
        const auto endOfText = vocabulary.special("<|endoftext|>");
        const auto imEnd = vocabulary.special("<|im_end|>");
        vocabulary.data.bosId = endOfText;
        vocabulary.data.eosId = imEnd;
        {
            const Tokenizer tokenizer(vocabulary.data);
            QCOMPARE(tokenizer.encode("a"), vocabulary.ids({"a"}));
            QCOMPARE(tokenizer.bos(), std::optional<std::int32_t>(endOfText));
            QCOMPARE(tokenizer.stopTokens(), (std::vector<std::int32_t>{imEnd, endOfText}));
        }
        vocabulary.data.addBos = true;
        vocabulary.data.addEos = true;
        const Tokenizer tokenizer(vocabulary.data);
        QCOMPARE(tokenizer.encode("a"),
                 (std::vector<std::int32_t>{endOfText, vocabulary.id("a"), imEnd}));
        QCOMPARE(tokenizer.encode(""), (std::vector<std::int32_t>{endOfText, imEnd}));
        QCOMPARE(tokenizer.encode("a", false), vocabulary.ids({"a"}));
        QCOMPARE(tokenizer.decode(tokenizer.encode("a"), true), std::string("a"));
    }

    // Llama-3 style rules take a piece that is a token as it is, without merging.
    void llama3IgnoresMergesForWholeTokens() {
        auto vocabulary = makeVocabulary({{"a", "b"}}, "llama-bpe");
        vocabulary.data.tokens.push_back(mapped("abc"));
        vocabulary.data.tokenTypes.push_back(TokenType::Normal);
        const auto abc = static_cast<std::int32_t>(vocabulary.data.tokens.size() - 1);
        QCOMPARE(Tokenizer(vocabulary.data).encode("abc"), (std::vector<std::int32_t>{abc}));
        vocabulary.data.preTokenizer = "gpt-2";
        QCOMPARE(Tokenizer(vocabulary.data).encode("abc"), vocabulary.ids({"ab", "c"}));
    }

    void badVocabulariesAreRefused() {
        const auto good = makeVocabulary({{"a", "b"}});
        QVERIFY_THROWS_NO_EXCEPTION(Tokenizer{good.data});

        auto missingPart = good;
        missingPart.data.merges.push_back(mapped("a") + " " + "\xE2\x82\xAC"); // "€": no token
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{missingPart.data});
        auto missingResult = good;
        missingResult.data.merges.push_back(mapped("b") + " " + mapped("c")); // no "bc" token
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{missingResult.data});
        auto noSpace = good;
        noSpace.data.merges.push_back(mapped("bc"));
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{noSpace.data});

        auto badBos = good;
        badBos.data.bosId = static_cast<std::int32_t>(good.data.tokens.size());
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{badBos.data});
        auto negativeEos = good;
        negativeEos.data.eosId = -1;
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{negativeEos.data});
        auto bosWanted = good;
        bosWanted.data.addBos = true;
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{bosWanted.data});
        auto shortTypes = good;
        shortTypes.data.tokenTypes.pop_back();
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{shortTypes.data});
        auto shortScores = good;
        shortScores.data.scores.assign(3, 0.0f);
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{shortScores.data});
        QVERIFY_THROWS_EXCEPTION(ModelError, Tokenizer{TokenizerData{}});

        const Tokenizer tokenizer(good.data);
        QVERIFY_THROWS_EXCEPTION(std::out_of_range,
                                 tokenizer.decode(std::vector<std::int32_t>{-1}));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, tokenizer.tokenText(tokenizer.vocabSize()));
    }

    // Long runs of one character class must neither blow a regex stack nor take quadratic
    // time (the merge queue, not a rescan per merge).
    void longRunsStayFast() {
        const auto vocabulary = makeVocabulary({{" ", " "}, {"=", "="}, {"==", "=="}});
        const Tokenizer tokenizer(vocabulary.data);
        const std::string text =
            std::string(100000, ' ') + "x" + std::string(100000, '=') + std::string(50000, '\n');
        const auto start = std::chrono::steady_clock::now();
        const auto ids = tokenizer.encode(text);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("250 KB of runs: %zu tokens in %.0f ms", ids.size(), seconds * 1e3);
        QCOMPARE(tokenizer.decode(ids), text);
        // 99,999 spaces (the last one joins "x"): 49,999 pairs and one single; " x" has no
        // merge: 2; 100,000 "=": 25,000 "===="; newlines have no merges: 50,000.
        QCOMPARE(ids.size(), std::size_t(50000 + 2 + 25000 + 50000));

        for (const char* rule : {"smollm", "default", "llama-bpe", "qwen2"}) {
            auto other = vocabulary.data;
            other.preTokenizer = rule;
            const Tokenizer otherTokenizer(other);
            const auto otherStart = std::chrono::steady_clock::now();
            const auto otherIds = otherTokenizer.encode(text);
            qInfo("%s: %.0f ms", rule,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - otherStart)
                          .count() *
                      1e3);
            QCOMPARE(otherTokenizer.decode(otherIds), text);
        }
    }
};

QTEST_APPLESS_MAIN(TestTokenizerBpe)
#include "test_tokenizer_bpe.moc"
