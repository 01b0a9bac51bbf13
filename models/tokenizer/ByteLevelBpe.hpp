#pragma once
// GPT-2 style byte-level BPE (private to models/): every byte of the text is first mapped to
// a printable code point (so a vocabulary of strings can hold any byte sequence), the text
// is split by the pre-tokenizer, and within each piece adjacent symbols are merged, the pair
// with the best (lowest) merge rank first, leftmost first among equals.
#include "models/tokenizer/PreTokenizer.hpp"
#include "models/tokenizer/TokenIndex.hpp"
#include "models/tokenizer/TokenizerData.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferscope::models::detail {

// GPT-2's reversible byte <-> code point table: printable Latin-1 bytes stand for
// themselves, the other 68 bytes take the code points from U+0100 on, in byte order.
char32_t byteToCodePoint(unsigned char byte);
std::optional<unsigned char> codePointToByte(char32_t codePoint);
// The mapped code point of a byte, as UTF-8.
const std::string& byteToMappedUtf8(unsigned char byte);
// Bytes a vocabulary string stands for; a code point outside the table is kept as UTF-8.
std::string mappedTextToBytes(std::string_view text);

class ByteLevelBpe {
public:
    // Throws ModelError for an unknown pre-tokenizer or a merge that names a missing token.
    ByteLevelBpe(const TokenizerData& data, const TokenIndex& index);

    // Appends the ids of text, which must be valid UTF-8 and free of special tokens.
    void encode(std::string_view text, const TokenIndex& index,
                std::vector<std::int32_t>& out) const;

private:
    struct Merge {
        std::int32_t rank;
        std::int32_t result;
    };
    static std::uint64_t pairKey(std::int32_t left, std::int32_t right) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
               static_cast<std::uint32_t>(right);
    }
    void encodePiece(std::string_view piece, const TokenIndex& index,
                     std::vector<std::int32_t>& out) const;

    PreTokenizer preTokenizer_;
    std::array<std::int32_t, 256> byteTokens_{}; // -1 where the vocabulary lacks the byte
    std::unordered_map<std::uint64_t, Merge> merges_;
};

} // namespace inferscope::models::detail
