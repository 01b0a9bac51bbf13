// The default model's tokenizer (SmolLM2, byte-level BPE, pre-tokenizer "smollm") against
// llama.cpp: every fixture string must encode to llama.cpp's ids and decode back to itself.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/tokenizer/ChatTemplate.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include "tests/DefaultModel.hpp"
#include <QtTest>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

using namespace inferscope::models;

namespace {

nlohmann::json readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return nlohmann::json::parse(in);
}

std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

QString describe(const std::vector<std::int32_t>& ids) {
    QStringList parts;
    for (std::int32_t id : ids) parts << QString::number(id);
    return "[" + parts.join(", ") + "]";
}

} // namespace

class TestSlowTokenizerDefault : public QObject {
    Q_OBJECT

    std::optional<Tokenizer> tokenizer_;

    // Encodes every fixture string; returns how many match, warning about the others.
    static int countMatches(const Tokenizer& tokenizer, const nlohmann::json& strings,
                            const nlohmann::json& expected, const char* label) {
        int matches = 0;
        for (std::size_t i = 0; i < strings.size(); ++i) {
            const auto text = strings[i].get<std::string>();
            const auto want = expected[i].get<std::vector<std::int32_t>>();
            const auto got = tokenizer.encode(text, false, true);
            if (got == want) {
                ++matches;
                continue;
            }
            qWarning("%s #%zu %s: got %s, llama.cpp %s", label, i,
                     nlohmann::json(text).dump().c_str(), qPrintable(describe(got)),
                     qPrintable(describe(want)));
        }
        qInfo("%s: %d of %d fixture strings match llama.cpp", label, matches, int(strings.size()));
        return matches;
    }

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        LoadedModel model = loadGgufModel(path);
        QCOMPARE(model.tokenizer.kind, TokenizerKind::ByteLevelBpe);
        QCOMPARE(QString::fromStdString(model.tokenizer.preTokenizer), QString("smollm"));
        tokenizer_.emplace(std::move(model.tokenizer));
    }

    void fixtureStringsEncodeLikeLlamaCpp() {
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-smollm2.json");
        const auto& strings = fixture.at("strings");
        QVERIFY(strings.size() >= 60);
        QCOMPARE(strings.size(), fixture.at("ids").size());
        QCOMPARE(countMatches(*tokenizer_, strings, fixture.at("ids"), "smollm"),
                 int(strings.size()));
    }

    // The other split rules, with the same vocabulary and merges: llama.cpp's ids come from
    // vocab-only copies of the model's tokenizer that name each rule.
    void otherPreTokenizersEncodeLikeLlamaCpp_data() {
        QTest::addColumn<QString>("rule");
        for (const char* rule : {"gpt-2", "default", "llama-bpe", "qwen2"}) {
            QTest::newRow(rule) << QString(rule);
        }
    }
    void otherPreTokenizersEncodeLikeLlamaCpp() {
        QFETCH(QString, rule);
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-smollm2.json");
        const auto& strings = fixture.at("strings");
        const auto& expected = fixture.at("idsByPreTokenizer").at(rule.toStdString());
        QCOMPARE(expected.size(), strings.size());
        TokenizerData data = tokenizer_->data();
        data.preTokenizer = rule.toStdString();
        const Tokenizer tokenizer(std::move(data));
        QCOMPARE(countMatches(tokenizer, strings, expected, qPrintable(rule)), int(strings.size()));
    }

    void fixtureStringsWithBos() {
        // SmolLM2 sets add_bos_token = false, so adding special tokens adds nothing here.
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-smollm2.json");
        const auto& withBos = fixture.at("withBos");
        for (std::size_t i = 0; i < withBos.at("strings").size(); ++i) {
            const auto text = withBos.at("strings")[i].get<std::string>();
            QCOMPARE(tokenizer_->encode(text, true, true),
                     withBos.at("ids")[i].get<std::vector<std::int32_t>>());
        }
    }

    void fixtureStringsRoundTrip() {
        const auto fixture = readJson(INFERSCOPE_TEST_DATA "/tokenizer-smollm2.json");
        const auto& strings = fixture.at("strings");
        int lossy = 0;
        for (std::size_t i = 0; i < strings.size(); ++i) {
            const auto text = strings[i].get<std::string>();
            // SmolLM2's vocabulary lacks 21 byte tokens (0x04, 0x1D, 0xC0, ...); llama.cpp
            // drops such bytes, and so do we. Where llama.cpp's own ids lose bytes, the
            // round trip cannot hold: those strings must lose exactly what llama.cpp loses.
            const auto reference = fixture.at("ids")[i].get<std::vector<std::int32_t>>();
            const std::string expected = tokenizer_->decode(reference);
            if (expected != text) ++lossy;
            QCOMPARE(
                QString::fromStdString(tokenizer_->decode(tokenizer_->encode(text, false, true))),
                QString::fromStdString(expected));
        }
        QCOMPARE(lossy, 1); // only the string with U+001D
        // Without special-token parsing, special tokens written in the text survive as text.
        for (const char* text : {"<|im_start|>user\nHi<|im_end|>", "<|endoftext|>"}) {
            const auto ids = tokenizer_->encode(text, false, false);
            QVERIFY(std::none_of(ids.begin(), ids.end(),
                                 [&](auto id) { return tokenizer_->isControl(id); }));
            QCOMPARE(tokenizer_->decode(ids), std::string(text));
        }
    }

    void specialTokensAndStops() {
        QCOMPARE(tokenizer_->encode("<|im_start|>", false, true), std::vector<std::int32_t>{1});
        QVERIFY(tokenizer_->encode("<|im_start|>", false, false).size() > 1);
        QVERIFY(tokenizer_->isControl(2));
        QCOMPARE(tokenizer_->tokenText(2), std::string("<|im_end|>"));
        // EOS is <|im_end|> (2); <|endoftext|> (0) also ends a generation.
        QCOMPARE(tokenizer_->stopTokens(), (std::vector<std::int32_t>{2, 0}));
        QCOMPARE(tokenizer_->decode(std::vector<std::int32_t>{1, 4093, 198}, true),
                 std::string("user\n"));
    }

    // --chat follows SmolLM2's own template: a question without a system message gets the
    // template's default one, read from the GGUF's chat_template (never run).
    void chatFollowsTheTemplatesDefaultSystemMessage() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        const LoadedModel model = loadGgufModel(path);
        const ChatFormat format = detectChatFormat(model.tokenizer);
        QCOMPARE(format.family, ChatFamily::ChatML);
        QVERIFY(format.defaultSystemMessage.has_value());
        QCOMPARE(
            *format.defaultSystemMessage,
            std::string("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
        const std::vector<ChatMessage> question = {{"user", "What is the capital of France?"}};
        const auto withDefault = tokenizer_->encode(formatChat(format, question, true), true, true);
        const auto bare =
            tokenizer_->encode(formatChat({ChatFamily::ChatML}, question, true), true, true);
        qInfo("--chat prompt tokens: %zu with the template's default system message, %zu without",
              withDefault.size(), bare.size());
        // The system turn "<|im_start|>system\n...<|im_end|>\n" is 21 tokens more.
        QCOMPARE(withDefault.size(), bare.size() + 21);
        // A system message of the caller's own replaces the default.
        const std::vector<ChatMessage> own = {{"system", "Be brief."}, question.front()};
        QCOMPARE(formatChat(format, own, true), formatChat({ChatFamily::ChatML}, own, true));
    }

    void corpusEncodingTime() {
        const auto corpusPath = defaultCorpusPath();
        if (!std::filesystem::exists(corpusPath)) {
            if (std::getenv("INFERSCOPE_REQUIRE_MODEL") != nullptr) QFAIL("corpus missing");
            QSKIP("corpus not installed (scripts/setup places it)");
        }
        const std::string corpus = readFile(corpusPath);
        const auto start = std::chrono::steady_clock::now();
        const auto ids = tokenizer_->encode(corpus, false, true);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("encoded %zu bytes of corpus into %zu tokens in %.1f ms", corpus.size(), ids.size(),
              seconds * 1e3);
        QCOMPARE(tokenizer_->decode(ids), corpus);
        // The perplexity fixture holds llama.cpp's ids for the whole corpus.
        const auto reference = readJson(INFERSCOPE_TEST_DATA "/reference-smollm2.json");
        QCOMPARE(ids,
                 reference.at("perplexity").at("corpusTokens").get<std::vector<std::int32_t>>());
    }
};

QTEST_APPLESS_MAIN(TestSlowTokenizerDefault)
#include "test_slow_tokenizer_default.moc"
