#include "models/tokenizer/PreTokenizer.hpp"

#include "models/ModelError.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <new>
#include <string>

namespace inferscope::models::detail {

namespace {

// Whitespace is the Unicode White_Space property, as in llama.cpp's tables. PCRE2's \s
// would also take U+180E (MONGOLIAN VOWEL SEPARATOR, no longer White_Space since Unicode
// 6.3), which changes the splits around it.

// GPT-2's word rule: contractions, letters, numbers or other symbols with at most one
// leading space, and whitespace runs that leave their last space to the next word.
constexpr std::string_view kGpt2Words =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+)"
    R"(|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

// Llama 3: case-insensitive contractions, a letter run may take one leading non-letter,
// numbers in groups of up to three, newlines kept together with the whitespace before them.
constexpr std::string_view kLlama3Words =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}{1,3}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+)"
    R"(|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

// Qwen2: as Llama 3 but every digit on its own.
constexpr std::string_view kQwen2Words =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+)"
    R"(|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

struct Rule {
    std::vector<std::string_view> names;
    std::vector<std::string_view> patterns;
    bool ignoresMerges = false;
};

const std::vector<Rule>& rules() {
    static const std::vector<Rule> table = {
        // SmolLM, StarCoder and relatives: every digit is split off first, then GPT-2 words.
        {{"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"},
         {R"(\p{N})", kGpt2Words}},
        {{"gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais", "roberta-bpe"}, {kGpt2Words}},
        // llama.cpp's fallback for BPE files that name no rule.
        {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Words, R"(\p{N}+)", R"([0-9][0-9][0-9])"}},
        {{"llama-bpe", "llama3", "llama-v3", "falcon3", "dbrx", "smaug-bpe"}, {kLlama3Words}, true},
        {{"qwen2", "stablelm2", "megrez"}, {kQwen2Words}},
    };
    return table;
}

const Rule* findRule(std::string_view name) {
    for (const Rule& rule : rules()) {
        for (std::string_view candidate : rule.names) {
            if (candidate == name) return &rule;
        }
    }
    return nullptr;
}

} // namespace

struct PreTokenizer::CompiledPattern {
    pcre2_code* code = nullptr;

    explicit CompiledPattern(std::string_view pattern) {
        int errorCode = 0;
        PCRE2_SIZE errorOffset = 0;
        code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
        if (code == nullptr) {
            std::array<PCRE2_UCHAR, 256> message{};
            pcre2_get_error_message(errorCode, message.data(), message.size());
            throw ModelError("pre-tokenizer pattern '" + std::string(pattern) + "' at " +
                             std::to_string(errorOffset) + ": " +
                             reinterpret_cast<const char*>(message.data()));
        }
        // JIT is an optimisation only: where it is unavailable the interpreter runs.
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    }
    ~CompiledPattern() { pcre2_code_free(code); }
    CompiledPattern(const CompiledPattern&) = delete;
    CompiledPattern& operator=(const CompiledPattern&) = delete;
};

namespace {

struct MatchData {
    pcre2_match_data* data;
    explicit MatchData(const pcre2_code* code)
        : data(pcre2_match_data_create_from_pattern(code, nullptr)) {
        if (data == nullptr) throw std::bad_alloc();
    }
    ~MatchData() { pcre2_match_data_free(data); }
    MatchData(const MatchData&) = delete;
    MatchData& operator=(const MatchData&) = delete;
};

// Appends the pieces of one fragment: matches, and the unmatched stretches between them.
void splitFragment(const pcre2_code* code, pcre2_match_data* match, std::string_view fragment,
                   std::vector<std::string_view>& out) {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(fragment.data());
    std::size_t searchFrom = 0;
    std::size_t pieceStart = 0;
    while (searchFrom < fragment.size()) {
        // The fragment is the whole subject, so lookaheads cannot see past its end.
        const int rc = pcre2_match(code, subject, fragment.size(), searchFrom, PCRE2_NO_UTF_CHECK,
                                   match, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            std::array<PCRE2_UCHAR, 256> message{};
            pcre2_get_error_message(rc, message.data(), message.size());
            throw ModelError(std::string("pre-tokenizer match failed: ") +
                             reinterpret_cast<const char*>(message.data()));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        const std::size_t begin = ovector[0];
        std::size_t end = ovector[1];
        if (begin > pieceStart) out.push_back(fragment.substr(pieceStart, begin - pieceStart));
        if (end == begin) {
            // None of our patterns matches empty text; step over one character if one did.
            end = begin + 1;
            while (end < fragment.size() &&
                   (static_cast<unsigned char>(fragment[end]) & 0xC0) == 0x80) {
                ++end;
            }
        }
        out.push_back(fragment.substr(begin, end - begin));
        pieceStart = end;
        searchFrom = end;
    }
    if (pieceStart < fragment.size()) out.push_back(fragment.substr(pieceStart));
}

} // namespace

PreTokenizer::PreTokenizer(std::string_view name) {
    const Rule* rule = findRule(name);
    if (rule == nullptr) {
        throw ModelError("unknown pre-tokenizer '" + std::string(name) + "'");
    }
    for (std::string_view pattern : rule->patterns) {
        patterns_.push_back(std::make_unique<CompiledPattern>(pattern));
    }
    ignoresMerges_ = rule->ignoresMerges;
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

bool PreTokenizer::isKnown(std::string_view name) {
    return findRule(name) != nullptr;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    std::vector<std::string_view> pieces;
    if (text.empty()) return pieces;
    pieces.push_back(text);
    std::vector<std::string_view> next;
    for (const auto& pattern : patterns_) {
        MatchData match(pattern->code);
        next.clear();
        next.reserve(pieces.size() * 2);
        for (std::string_view fragment : pieces) {
            splitFragment(pattern->code, match.data, fragment, next);
        }
        pieces.swap(next);
    }
    return pieces;
}

} // namespace inferscope::models::detail
