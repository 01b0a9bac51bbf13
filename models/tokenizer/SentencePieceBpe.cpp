#include "models/tokenizer/SentencePieceBpe.hpp"

#include "models/tokenizer/Utf8.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace inferscope::models::detail {

SentencePieceBpe::SentencePieceBpe(const TokenizerData& data, const TokenIndex& index)
    : scores_(data.scores), unknownId_(data.unknownId.value_or(-1)) {
    scores_.resize(data.tokens.size(), 0.0f);
    for (unsigned byte = 0; byte < 256; ++byte) {
        std::array<char, 8> name{};
        std::snprintf(name.data(), name.size(), "<0x%02X>", byte);
        auto id = index.find(name.data());
        // Like llama.cpp: without a byte token, a token made of the byte itself will do.
        if (!id) id = index.find(std::string(1, static_cast<char>(byte)));
        byteTokens_[byte] = id.value_or(-1);
    }
}

void SentencePieceBpe::encode(std::string_view text, bool addSpacePrefix, const TokenIndex& index,
                              std::vector<std::int32_t>& out) const {
    std::string escaped;
    escaped.reserve(text.size() + 8);
    if (addSpacePrefix) escaped += kSpaceMark;
    for (char c : text) {
        if (c == ' ') {
            escaped += kSpaceMark;
        } else {
            escaped += c;
        }
    }
    if (escaped.empty()) return;

    // Symbols are byte ranges of the escaped text in a doubly linked list; a merged symbol
    // covers its own range and its right neighbour's, which always follows it directly.
    struct Symbol {
        std::size_t offset;
        std::size_t length; // 0 once folded into the left neighbour
        std::int32_t prev;
        std::int32_t next;
    };
    struct Candidate {
        float score;
        std::int32_t left;
        std::int32_t right;
        std::size_t length;
    };
    // std heap functions keep the largest first: "larger" is a higher score, then further left.
    const auto lessPromising = [](const Candidate& a, const Candidate& b) {
        return a.score != b.score ? a.score < b.score : a.left > b.left;
    };

    std::vector<Symbol> symbols;
    for (std::size_t pos = 0; pos < escaped.size();) {
        const std::size_t length = std::min(
            claimedUtf8Length(static_cast<unsigned char>(escaped[pos])), escaped.size() - pos);
        const auto index = static_cast<std::int32_t>(symbols.size());
        symbols.push_back({pos, length, index - 1, -1});
        if (index > 0) symbols[index - 1].next = index;
        pos += length;
    }

    std::vector<Candidate> heap;
    const auto consider = [&](std::int32_t left, std::int32_t right) {
        if (left < 0 || right < 0) return;
        const std::size_t length = symbols[left].length + symbols[right].length;
        const auto id = index.find(std::string_view(escaped).substr(symbols[left].offset, length));
        if (!id) return;
        heap.push_back({scores_[*id], left, right, length});
        std::push_heap(heap.begin(), heap.end(), lessPromising);
    };
    for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size()); ++i) {
        consider(i, i + 1);
    }

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), lessPromising);
        const Candidate best = heap.back();
        heap.pop_back();
        Symbol& left = symbols[best.left];
        Symbol& right = symbols[best.right];
        // Stale if either side grew or vanished since the pair was queued.
        if (left.length == 0 || right.length == 0 || left.next != best.right ||
            left.length + right.length != best.length) {
            continue;
        }
        left.length = best.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = best.left;
        consider(left.prev, best.left);
        consider(best.left, left.next);
    }

    for (std::int32_t i = 0; i >= 0; i = symbols[i].next) {
        const std::string_view symbol =
            std::string_view(escaped).substr(symbols[i].offset, symbols[i].length);
        if (const auto id = index.find(symbol)) {
            out.push_back(*id);
        } else {
            appendBytes(symbol, out);
        }
    }
}

void SentencePieceBpe::appendBytes(std::string_view symbol, std::vector<std::int32_t>& out) const {
    const bool allBytesKnown = std::all_of(symbol.begin(), symbol.end(), [&](char c) {
        return byteTokens_[static_cast<unsigned char>(c)] >= 0;
    });
    if (allBytesKnown) {
        for (char c : symbol) out.push_back(byteTokens_[static_cast<unsigned char>(c)]);
    } else if (unknownId_ >= 0) {
        out.push_back(unknownId_); // one unknown token per character, as SentencePiece does
    }
}

} // namespace inferscope::models::detail
