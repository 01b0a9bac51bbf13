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

} // namespace inferscope::models
