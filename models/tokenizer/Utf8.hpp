#pragma once
// UTF-8 helpers for the tokenizers (private to models/).
#include <cstddef>
#include <string>
#include <string_view>

namespace inferscope::models::detail {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

void appendUtf8(std::string& out, char32_t codePoint);

// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF) that starts at text[pos]; 0 if none does.
std::size_t wellFormedLength(std::string_view text, std::size_t pos);

// Decodes the code point of a well-formed sequence of the given length.
char32_t decodeUtf8(std::string_view text, std::size_t pos, std::size_t length);

// The text with every byte that does not start a well-formed sequence replaced by U+FFFD,
// one replacement per byte, as llama.cpp does before it pre-tokenizes (PCRE2 in UTF mode
// needs valid input).
std::string sanitizeUtf8(std::string_view text);

// Bytes a sequence claims from its lead byte alone (1 for stray continuation bytes); the
// SentencePiece splitter uses this, as llama.cpp does, without validating the sequence.
std::size_t claimedUtf8Length(unsigned char leadByte);

} // namespace inferscope::models::detail
