#include "models/tokenizer/Tokenizer.hpp"

#include "models/ModelError.hpp"
#include "models/tokenizer/ByteLevelBpe.hpp"
#include "models/tokenizer/SentencePieceBpe.hpp"
#include "models/tokenizer/TokenIndex.hpp"
#include "models/tokenizer/UnicodeNormalization.hpp"
#include "models/tokenizer/Utf8.hpp"

#include <algorithm>
#include <stdexcept>

namespace inferscope::models {

namespace {

bool isSpecialType(TokenType type) {
    return type == TokenType::Control || type == TokenType::UserDefined ||
           type == TokenType::Unknown;
}

// "<0x0A>" -> 0x0A; nullopt for anything else.
std::optional<unsigned char> parseByteToken(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
    unsigned value = 0;
    for (char c : text.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9') {
            value |= static_cast<unsigned>(c - '0');
        } else if (c >= 'A' && c <= 'F') {
            value |= static_cast<unsigned>(c - 'A' + 10);
        } else if (c >= 'a' && c <= 'f') {
            value |= static_cast<unsigned>(c - 'a' + 10);
        } else {
            return std::nullopt;
        }
    }
    return static_cast<unsigned char>(value);
}

std::string replaceSpaceMarks(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
        if (text.substr(pos, detail::kSpaceMark.size()) == detail::kSpaceMark) {
            out += ' ';
            pos += detail::kSpaceMark.size();
        } else {
            out += text[pos++];
        }
    }
    return out;
}

// A stretch of input text, or a special token found written in it.
struct Fragment {
    std::string_view text;
    std::int32_t token = -1;
};

} // namespace

struct Tokenizer::Impl {
    TokenizerData data;
    detail::TokenIndex index;
    std::vector<std::int32_t> specialTokens; // matched in the text, longest first
    std::vector<std::string> pieces;         // the bytes of every token
    std::optional<detail::ByteLevelBpe> byteLevel;
    std::optional<detail::SentencePieceBpe> sentencePiece;

    TokenType typeOf(std::int32_t id) const {
        return data.tokenTypes.empty() ? TokenType::Normal
                                       : data.tokenTypes[static_cast<std::size_t>(id)];
    }

    void checkId(std::int32_t id) const {
        if (id < 0 || static_cast<std::size_t>(id) >= data.tokens.size()) {
            throw std::out_of_range("token id " + std::to_string(id) + " is outside the " +
                                    std::to_string(data.tokens.size()) + "-token vocabulary");
        }
    }

    std::vector<Fragment> partition(std::string_view text, bool parseSpecial) const;
    void build(TokenizerData tokenizerData);
};

std::vector<Fragment> Tokenizer::Impl::partition(std::string_view text, bool parseSpecial) const {
    std::vector<Fragment> fragments;
    if (!text.empty()) fragments.push_back({text});
    // Like llama.cpp: one special token at a time, longest first, over every stretch still
    // plain. Without parseSpecial only user-defined tokens are still split out.
    std::vector<Fragment> next;
    for (std::int32_t id : specialTokens) {
        if (!parseSpecial && typeOf(id) != TokenType::UserDefined) continue;
        const std::string_view special = data.tokens[static_cast<std::size_t>(id)];
        next.clear();
        for (const Fragment& fragment : fragments) {
            if (fragment.token >= 0) {
                next.push_back(fragment);
                continue;
            }
            std::string_view rest = fragment.text;
            for (std::size_t found = rest.find(special); found != std::string_view::npos;
                 found = rest.find(special)) {
                if (found > 0) next.push_back({rest.substr(0, found)});
                next.push_back({special, id});
                rest.remove_prefix(found + special.size());
            }
            if (!rest.empty()) next.push_back({rest});
        }
        fragments.swap(next);
    }
    return fragments;
}

Tokenizer::Tokenizer(TokenizerData data) : impl_(std::make_unique<Impl>()) {
    // The parts below raise errors about fields; the file they came from is named here.
    const std::string source = data.source;
    try {
        impl_->build(std::move(data));
    } catch (const ModelError& error) {
        throw error.inFile(source);
    }
}

void Tokenizer::Impl::build(TokenizerData tokenizerData) {
    Impl& impl = *this;
    impl.data = std::move(tokenizerData);
    const TokenizerData& d = impl.data;
    const auto vocabularySize = d.tokens.size();
    if (vocabularySize == 0) {
        throw ModelError("", "tokenizer.ggml.tokens", std::nullopt, "the vocabulary is empty");
    }
    if (vocabularySize > static_cast<std::size_t>(INT32_MAX)) {
        throw ModelError("", "tokenizer.ggml.tokens", std::nullopt, "the vocabulary is too large");
    }
    if (!d.scores.empty() && d.scores.size() != vocabularySize) {
        throw ModelError("", "tokenizer.ggml.scores", std::nullopt,
                         std::to_string(d.scores.size()) + " scores for " +
                             std::to_string(vocabularySize) + " tokens");
    }
    if (!d.tokenTypes.empty() && d.tokenTypes.size() != vocabularySize) {
        throw ModelError("", "tokenizer.ggml.token_type", std::nullopt,
                         std::to_string(d.tokenTypes.size()) + " token types for " +
                             std::to_string(vocabularySize) + " tokens");
    }
    const auto checkSpecialId = [&](const std::optional<std::int32_t>& id, const char* field) {
        if (id && (*id < 0 || static_cast<std::size_t>(*id) >= vocabularySize)) {
            throw ModelError("", field, std::nullopt,
                             "token id " + std::to_string(*id) + " is outside the " +
                                 std::to_string(vocabularySize) + "-token vocabulary");
        }
    };
    checkSpecialId(d.bosId, "tokenizer.ggml.bos_token_id");
    checkSpecialId(d.eosId, "tokenizer.ggml.eos_token_id");
    checkSpecialId(d.unknownId, "tokenizer.ggml.unknown_token_id");
    checkSpecialId(d.paddingId, "tokenizer.ggml.padding_token_id");
    if (d.addBos && !d.bosId) {
        throw ModelError("", "tokenizer.ggml.add_bos_token", std::nullopt,
                         "asks for a BOS token but the file names none");
    }
    if (d.addEos && !d.eosId) {
        throw ModelError("", "tokenizer.ggml.add_eos_token", std::nullopt,
                         "asks for an EOS token but the file names none");
    }

    for (std::size_t id = 0; id < vocabularySize; ++id) {
        // Empty texts would match everywhere; llama.cpp renames them, we leave them out.
        if (!d.tokens[id].empty()) impl.index.add(d.tokens[id], static_cast<std::int32_t>(id));
    }
    for (std::size_t id = 0; id < vocabularySize; ++id) {
        const auto tokenId = static_cast<std::int32_t>(id);
        if (isSpecialType(impl.typeOf(tokenId)) && !d.tokens[id].empty()) {
            impl.specialTokens.push_back(tokenId);
        }
    }
    std::stable_sort(impl.specialTokens.begin(), impl.specialTokens.end(),
                     [&](std::int32_t a, std::int32_t b) {
                         return d.tokens[static_cast<std::size_t>(a)].size() >
                                d.tokens[static_cast<std::size_t>(b)].size();
                     });

    if (d.kind == TokenizerKind::ByteLevelBpe) {
        impl.byteLevel.emplace(d, impl.index);
    } else {
        impl.sentencePiece.emplace(d, impl.index);
    }

    impl.pieces.resize(vocabularySize);
    for (std::size_t id = 0; id < vocabularySize; ++id) {
        const std::string& text = d.tokens[id];
        const TokenType type = impl.typeOf(static_cast<std::int32_t>(id));
        std::string& piece = impl.pieces[id];
        if (isSpecialType(type)) {
            piece = text;
        } else if (type == TokenType::Unused) {
            piece.clear(); // llama.cpp renders unused tokens as nothing
        } else if (d.kind == TokenizerKind::ByteLevelBpe) {
            piece = detail::mappedTextToBytes(text);
        } else if (const auto byte =
                       type == TokenType::Byte ? parseByteToken(text) : std::nullopt) {
            piece.assign(1, static_cast<char>(*byte));
        } else {
            piece = replaceSpaceMarks(text);
        }
    }
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool addSpecial,
                                            bool parseSpecial) const {
    const Impl& impl = *impl_;
    std::vector<std::int32_t> ids;
    ids.reserve(text.size() / 3 + 2);
    if (addSpecial && impl.data.addBos) ids.push_back(*impl.data.bosId);
    // SentencePiece: a "▁" goes before the text at the start and after every special token.
    bool afterSpecial = true;
    for (const Fragment& fragment : impl.partition(text, parseSpecial)) {
        if (fragment.token >= 0) {
            ids.push_back(fragment.token);
            afterSpecial = true;
            continue;
        }
        // The normalizer sees the text between special tokens, as in the tokenizers library.
        const std::string composed =
            impl.data.normalizeNfc ? detail::composeNfc(fragment.text) : std::string();
        const std::string_view piece = impl.data.normalizeNfc ? composed : fragment.text;
        if (impl.byteLevel) {
            impl.byteLevel->encode(detail::sanitizeUtf8(piece), impl.index, ids);
        } else {
            const TokenizerData& d = impl.data;
            const bool prefix =
                d.addSpacePrefix && afterSpecial &&
                !(d.spacePrefixUnlessSpace && !piece.empty() && piece.front() == ' ') &&
                !(d.spacePrefixAtInputStartOnly && fragment.text.data() != text.data());
            impl.sentencePiece->encode(piece, prefix, impl.index, ids);
            afterSpecial = false;
        }
    }
    if (addSpecial && impl.data.addEos) ids.push_back(*impl.data.eosId);
    return ids;
}

std::string Tokenizer::decodeNext(std::int32_t id, bool skipSpecial, bool& atTextStart) const {
    const Impl& impl = *impl_;
    impl.checkId(id);
    // The inverse of encode's SentencePiece space rule: the first text token after the start
    // or after a special token loses the one space the prefix rule put there. llama.cpp's
    // detokenizer strips it at the start only; we also strip it after special tokens so
    // that decode(encode(s)) == s holds when special tokens are written in s.
    // The Hugging Face library strips it from the first piece it renders only.
    const bool stripPrefixSpace = impl.sentencePiece && impl.data.addSpacePrefix;
    const TokenType type = impl.typeOf(id);
    if (isSpecialType(type)) {
        const bool skipped = skipSpecial && type != TokenType::UserDefined;
        atTextStart = impl.data.decodeStripsFirstPieceOnly ? atTextStart && skipped : true;
        if (skipped) return {};
        return impl.pieces[static_cast<std::size_t>(id)];
    }
    std::string_view piece = impl.pieces[static_cast<std::size_t>(id)];
    if (stripPrefixSpace && atTextStart && !piece.empty() && piece.front() == ' ')
        piece.remove_prefix(1);
    atTextStart = false;
    return std::string(piece);
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skipSpecial) const {
    bool atTextStart = true;
    std::string text;
    for (std::int32_t id : ids) text += decodeNext(id, skipSpecial, atTextStart);
    return text;
}

std::string Tokenizer::pieceBytes(std::int32_t id) const {
    impl_->checkId(id);
    return impl_->pieces[static_cast<std::size_t>(id)];
}

const std::string& Tokenizer::tokenText(std::int32_t id) const {
    impl_->checkId(id);
    return impl_->data.tokens[static_cast<std::size_t>(id)];
}

std::int32_t Tokenizer::vocabSize() const {
    return static_cast<std::int32_t>(impl_->data.tokens.size());
}

const TokenizerData& Tokenizer::data() const {
    return impl_->data;
}

bool Tokenizer::isControl(std::int32_t id) const {
    impl_->checkId(id);
    return impl_->typeOf(id) == TokenType::Control;
}

std::optional<std::int32_t> Tokenizer::bos() const {
    return impl_->data.bosId;
}
std::optional<std::int32_t> Tokenizer::eos() const {
    return impl_->data.eosId;
}

std::vector<std::int32_t> Tokenizer::stopTokens() const {
    std::vector<std::int32_t> stops;
    if (impl_->data.eosId) stops.push_back(*impl_->data.eosId);
    for (std::string_view marker : {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>"}) {
        const auto id = impl_->index.find(marker);
        if (id && std::find(stops.begin(), stops.end(), *id) == stops.end()) {
            stops.push_back(*id);
        }
    }
    return stops;
}

} // namespace inferscope::models
