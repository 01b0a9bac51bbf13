#pragma once
// SentencePiece-style BPE as in Llama-2 GGUF files (private to models/): spaces become "▁",
// the text starts as one symbol per UTF-8 character, and adjacent symbols are merged while
// their concatenation is a token, the pair whose merged token scores highest first
// (leftmost first among equals). A symbol that is no token falls back to <0xXX> byte
// tokens, or to the unknown token where the vocabulary has no byte token.
#include "models/tokenizer/TokenIndex.hpp"
#include "models/tokenizer/TokenizerData.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace inferscope::models::detail {

inline constexpr std::string_view kSpaceMark = "\xE2\x96\x81"; // U+2581, "▁"

class SentencePieceBpe {
public:
    SentencePieceBpe(const TokenizerData& data, const TokenIndex& index);

    // Appends the ids of text (free of special tokens). addSpacePrefix puts a "▁" first.
    void encode(std::string_view text, bool addSpacePrefix, const TokenIndex& index,
                std::vector<std::int32_t>& out) const;

private:
    void appendBytes(std::string_view symbol, std::vector<std::int32_t>& out) const;

    std::vector<float> scores_;
    std::array<std::int32_t, 256> byteTokens_{}; // -1 where there is none
    std::int32_t unknownId_ = -1;
};

} // namespace inferscope::models::detail
