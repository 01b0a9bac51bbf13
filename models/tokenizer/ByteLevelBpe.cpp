#include "models/tokenizer/ByteLevelBpe.hpp"

#include "models/ModelError.hpp"
#include "models/tokenizer/Utf8.hpp"

#include <algorithm>

namespace inferscope::models::detail {

namespace {

struct ByteTable {
    std::array<char32_t, 256> codePoints{};
    std::array<std::string, 256> utf8;
    std::unordered_map<char32_t, unsigned char> bytes;

    ByteTable() {
        const auto standsForItself = [](unsigned byte) {
            return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) ||
                   (byte >= 0xAE && byte <= 0xFF);
        };
        char32_t next = 0x100;
        for (unsigned byte = 0; byte < 256; ++byte) {
            codePoints[byte] = standsForItself(byte) ? static_cast<char32_t>(byte) : next++;
            appendUtf8(utf8[byte], codePoints[byte]);
            bytes.emplace(codePoints[byte], static_cast<unsigned char>(byte));
        }
    }
};

const ByteTable& byteTable() {
    static const ByteTable table;
    return table;
}

} // namespace

char32_t byteToCodePoint(unsigned char byte) {
    return byteTable().codePoints[byte];
}

std::optional<unsigned char> codePointToByte(char32_t codePoint) {
    const auto& bytes = byteTable().bytes;
    const auto it = bytes.find(codePoint);
    if (it == bytes.end()) return std::nullopt;
    return it->second;
}

const std::string& byteToMappedUtf8(unsigned char byte) {
    return byteTable().utf8[byte];
}

std::string mappedTextToBytes(std::string_view text) {
    std::string bytes;
    bytes.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t length = wellFormedLength(text, pos);
        if (length == 0) { // not UTF-8 at all: keep the byte as it is
            bytes += text[pos++];
            continue;
        }
        const char32_t codePoint = decodeUtf8(text, pos, length);
        if (const auto byte = codePointToByte(codePoint)) {
            bytes += static_cast<char>(*byte);
        } else {
            bytes.append(text.substr(pos, length));
        }
        pos += length;
    }
    return bytes;
}

ByteLevelBpe::ByteLevelBpe(const TokenizerData& data, const TokenIndex& index)
    : preTokenizer_(data.preTokenizer) {
    for (unsigned byte = 0; byte < 256; ++byte) {
        byteTokens_[byte] =
            index.find(byteToMappedUtf8(static_cast<unsigned char>(byte))).value_or(-1);
    }
    merges_.reserve(data.merges.size());
    for (std::size_t rank = 0; rank < data.merges.size(); ++rank) {
        const std::string& merge = data.merges[rank];
        // Split at the first space after the first character, as llama.cpp does, so a
        // left part may itself start with a space.
        const std::size_t space = merge.find(' ', 1);
        const auto fail = [&](const std::string& why) {
            throw ModelError("", "tokenizer.ggml.merges", std::nullopt,
                             "merge " + std::to_string(rank) + " '" + merge + "' " + why);
        };
        if (space == std::string::npos) fail("has no space between its two parts");
        const std::string_view left = std::string_view(merge).substr(0, space);
        const std::string_view right = std::string_view(merge).substr(space + 1);
        const auto leftId = index.find(left);
        const auto rightId = index.find(right);
        if (!leftId || !rightId) fail("names a token missing from the vocabulary");
        const auto resultId = index.find(std::string(left) + std::string(right));
        if (!resultId) fail("makes a token missing from the vocabulary");
        // The first (best) rank of a repeated merge wins.
        merges_.try_emplace(pairKey(*leftId, *rightId),
                            Merge{static_cast<std::int32_t>(rank), *resultId});
    }
}

void ByteLevelBpe::encode(std::string_view text, const TokenIndex& index,
                          std::vector<std::int32_t>& out) const {
    for (std::string_view piece : preTokenizer_.split(text)) encodePiece(piece, index, out);
}

void ByteLevelBpe::encodePiece(std::string_view piece, const TokenIndex& index,
                               std::vector<std::int32_t>& out) const {
    if (preTokenizer_.ignoresMerges()) {
        std::string mapped;
        for (char byte : piece) mapped += byteToMappedUtf8(static_cast<unsigned char>(byte));
        if (const auto id = index.find(mapped)) {
            out.push_back(*id);
            return;
        }
    }

    // One symbol per byte in a doubly linked list; merging folds the right symbol into the
    // left one. kAbsent marks a byte the vocabulary lacks (it never merges and is dropped,
    // as llama.cpp drops it), kMerged a symbol folded into its left neighbour.
    constexpr std::int32_t kAbsent = -1;
    constexpr std::int32_t kMerged = -2;
    struct Symbol {
        std::int32_t id;
        std::int32_t prev;
        std::int32_t next;
    };
    struct Candidate {
        std::int32_t rank;
        std::int32_t left;
        std::int32_t right;
        std::int32_t leftId;
        std::int32_t rightId;
        std::int32_t result;
    };
    // std heap functions keep the largest first: "larger" here means worse rank, then
    // further right, so the best-ranked, leftmost pair comes out on top.
    const auto worse = [](const Candidate& a, const Candidate& b) {
        return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
    };

    const auto count = static_cast<std::int32_t>(piece.size());
    std::vector<Symbol> symbols(piece.size());
    for (std::int32_t i = 0; i < count; ++i) {
        symbols[i] = {byteTokens_[static_cast<unsigned char>(piece[i])], i - 1,
                      i + 1 < count ? i + 1 : -1};
    }
    std::vector<Candidate> heap;
    const auto consider = [&](std::int32_t left, std::int32_t right) {
        if (left < 0 || right < 0) return;
        const std::int32_t leftId = symbols[left].id;
        const std::int32_t rightId = symbols[right].id;
        if (leftId < 0 || rightId < 0) return;
        const auto it = merges_.find(pairKey(leftId, rightId));
        if (it == merges_.end()) return;
        heap.push_back({it->second.rank, left, right, leftId, rightId, it->second.result});
        std::push_heap(heap.begin(), heap.end(), worse);
    };
    for (std::int32_t i = 0; i + 1 < count; ++i) consider(i, i + 1);

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), worse);
        const Candidate best = heap.back();
        heap.pop_back();
        Symbol& left = symbols[best.left];
        // Stale if either side changed since the pair was queued.
        if (left.id != best.leftId || left.next != best.right ||
            symbols[best.right].id != best.rightId) {
            continue;
        }
        Symbol& right = symbols[best.right];
        left.id = best.result;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = best.left;
        right.id = kMerged;
        consider(left.prev, best.left);
        consider(best.left, left.next);
    }

    for (std::int32_t i = count > 0 ? 0 : -1; i >= 0; i = symbols[i].next) {
        if (symbols[i].id != kAbsent) out.push_back(symbols[i].id);
    }
}

} // namespace inferscope::models::detail
