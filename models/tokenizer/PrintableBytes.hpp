#pragma once
// Token bytes as text anyone can print or put in JSON: a token may be part of a multi-byte
// character (byte-level BPE splits "ü" and emoji across tokens), so its bytes alone are not
// always valid UTF-8, and JSON writers refuse such strings.
#include <string>
#include <string_view>

namespace inferscope::models {

// Well-formed UTF-8 characters as they are; backslash as "\\"; newline, tab and carriage
// return as "\n", "\t", "\r"; every other control byte and every byte that is not part of a
// well-formed character as "\xNN". The result is valid UTF-8 and tells every byte apart.
std::string printableBytes(std::string_view bytes);

// Text from a file (a model's name, a token, a preset's name, a prompt) for a terminal or a
// table: like printableBytes, but a backslash stays itself (the text is read, not decoded),
// and C1 control characters (U+0080..U+009F, whose CSI starts escape sequences on some
// terminals) are escaped too. No escape sequence in a file reaches the terminal.
// keepLineBreaks: newline and tab pass through as they are (a generated text streamed to a
// terminal keeps its lines).
std::string printableText(std::string_view text, bool keepLineBreaks = false);

} // namespace inferscope::models
