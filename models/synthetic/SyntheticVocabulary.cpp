// The synthetic models' byte-level BPE vocabulary: merges learned from a built-in text.
#include "models/synthetic/SyntheticVocabulary.hpp"

#include "models/ModelError.hpp"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

namespace inferscope::models {

namespace {

constexpr std::uint32_t byteTokenCount = 256;
constexpr const char* endOfText = "<|endoftext|>";
constexpr const char* imStart = "<|im_start|>";
constexpr const char* imEnd = "<|im_end|>";
constexpr std::uint32_t specialTokenCount = 3;

// ChatML, the format of the default model's template family.
constexpr const char* chatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

// Text the tokenizer's merges are learned from: plain English, so common pairs ("th",
// "Ġthe", "ing") become tokens as they do in real vocabularies.
constexpr std::string_view trainingText =
    "The keeper of the lighthouse rose early, as he had done every morning for thirty years. "
    "He climbed the stairs, trimmed the wick and looked out over the grey water. There was a "
    "ship on the horizon, and he watched it for a long time while the kettle was boiling. "
    "When the wind turned to the north, the waves grew higher and the gulls went inland. "
    "In the evening he wrote in his log: the weather is changing, the ship has passed, the "
    "light is burning. Nothing else happened that day, and nothing needed to happen. "
    "People in the village said that he was lonely, but he did not think so. He had his "
    "books, his garden behind the wall, and the long conversations with the postman who came "
    "on Thursdays. They talked about the price of bread, the school that was going to close, "
    "and the storms that they remembered from when they were young. "
    "A model that reads this text learns which letters follow each other: that the comes "
    "before many nouns, that words ending in ing are common, and that there is a space "
    "between most of them. Counting pairs and merging the most frequent one, again and again, "
    "is all that byte pair encoding does. It is a simple idea, and it works well enough that "
    "nearly every language model in use today starts with it. "
    "Numbers such as 1, 2, 10, 42 and 2024 appear too, as do questions: what is the time? "
    "Where are you going? The answer is often shorter than the question.";

// --- Tokenizer -------------------------------------------------------------------------

std::string utf8(std::uint32_t codePoint) {
    std::string out;
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
    return out;
}

// GPT-2's byte -> printable character table: printable Latin-1 bytes stand for
// themselves, the others (controls, space, ...) for 256, 257, ... in byte order.
std::vector<std::string> byteLevelAlphabet() {
    std::vector<std::string> alphabet(byteTokenCount);
    std::uint32_t next = 256;
    for (std::uint32_t byte = 0; byte < byteTokenCount; ++byte) {
        const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                               (byte >= 0xAE && byte <= 0xFF);
        alphabet[byte] = utf8(printable ? byte : next++);
    }
    return alphabet;
}

// Pieces as GPT-2's split rule cuts plain ASCII: an optional space and then a run of
// letters, of digits, or of other symbols; runs of whitespace stand alone.
std::vector<std::string_view> splitPieces(std::string_view text) {
    auto kind = [](char c) {
        if (std::isalpha(static_cast<unsigned char>(c))) return 0;
        if (std::isdigit(static_cast<unsigned char>(c))) return 1;
        if (std::isspace(static_cast<unsigned char>(c))) return 2;
        return 3;
    };
    std::vector<std::string_view> pieces;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        if (text[i] == ' ' && i + 1 < text.size() && kind(text[i + 1]) != 2) ++i;
        const int runKind = kind(text[i]);
        while (i < text.size() && kind(text[i]) == runKind) ++i;
        pieces.push_back(text.substr(start, i - start));
    }
    return pieces;
}

} // namespace

const char* const syntheticChatTemplate = chatMlTemplate;

SyntheticVocabulary buildVocabulary(std::uint32_t vocabSize) {
    if (vocabSize < byteTokenCount + specialTokenCount)
        throw ModelError("synthetic model", "vocabSize", std::nullopt,
                         "needs at least 259 tokens (256 bytes and 3 specials), got " +
                             std::to_string(vocabSize));
    const std::size_t target = vocabSize - specialTokenCount;
    const auto alphabet = byteLevelAlphabet();
    SyntheticVocabulary vocabulary;
    vocabulary.tokens = alphabet;
    std::set<std::string> known(alphabet.begin(), alphabet.end());
    auto addMerge = [&](const std::string& left, const std::string& right) {
        vocabulary.merges.push_back(left + " " + right);
        if (known.insert(left + right).second) vocabulary.tokens.push_back(left + right);
    };

    // Byte-pair training: count adjacent symbols inside words, merge the most frequent pair
    // (ties: the smallest pair, for determinism), until pairs stop repeating.
    std::map<std::vector<std::string>, int> words;
    for (std::string_view piece : splitPieces(trainingText)) {
        std::vector<std::string> symbols;
        for (unsigned char byte : piece) symbols.push_back(alphabet[byte]);
        ++words[symbols];
    }
    while (vocabulary.tokens.size() < target) {
        std::map<std::pair<std::string, std::string>, int> pairCounts;
        for (const auto& [symbols, count] : words)
            for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
                pairCounts[{symbols[i], symbols[i + 1]}] += count;
        auto best = pairCounts.end();
        for (auto it = pairCounts.begin(); it != pairCounts.end(); ++it)
            if (best == pairCounts.end() || it->second > best->second) best = it;
        if (best == pairCounts.end() || best->second < 2) break;
        const auto [left, right] = best->first;
        addMerge(left, right);
        std::map<std::vector<std::string>, int> merged;
        for (const auto& [symbols, count] : words) {
            std::vector<std::string> out;
            for (std::size_t i = 0; i < symbols.size(); ++i) {
                if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
                    out.push_back(left + right);
                    ++i;
                } else {
                    out.push_back(symbols[i]);
                }
            }
            merged[out] += count;
        }
        words = std::move(merged);
    }
    // Larger vocabularies than the text supports: extend tokens by common letters.
    constexpr std::string_view letters = "etaoinshrdlucmfwypvbgkjqxz";
    std::size_t base = vocabulary.tokens.size() > byteTokenCount ? byteTokenCount : 'a';
    std::size_t sinceProgress = 0;
    while (vocabulary.tokens.size() < target) {
        const std::size_t before = vocabulary.tokens.size();
        const std::string stem = vocabulary.tokens[base];
        for (char letter : letters) {
            if (vocabulary.tokens.size() >= target) break;
            const std::string& suffix = alphabet[static_cast<unsigned char>(letter)];
            if (!known.contains(stem + suffix)) addMerge(stem, suffix);
        }
        sinceProgress = vocabulary.tokens.size() == before ? sinceProgress + 1 : 0;
        if (sinceProgress > vocabulary.tokens.size())
            throw ModelError("synthetic model: cannot grow the vocabulary");
        base = (base + 1) % vocabulary.tokens.size();
    }
    vocabulary.types.assign(vocabulary.tokens.size(), TokenType::Normal);
    for (const char* special : {endOfText, imStart, imEnd}) {
        vocabulary.tokens.push_back(special);
        vocabulary.types.push_back(TokenType::Control);
    }
    // As the default model: a chat turn starts with <|im_start|> and ends with <|im_end|>.
    vocabulary.bos = static_cast<std::int32_t>(vocabulary.tokens.size() - 2);
    vocabulary.eos = static_cast<std::int32_t>(vocabulary.tokens.size() - 1);
    return vocabulary;
}

} // namespace inferscope::models
