#include "models/tokenizer/PrintableBytes.hpp"

#include "models/tokenizer/Utf8.hpp"

#include <cstdio>

namespace inferscope::models {

std::string printableBytes(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t pos = 0; pos < bytes.size();) {
        const auto byte = static_cast<unsigned char>(bytes[pos]);
        const std::size_t length = detail::wellFormedLength(bytes, pos);
        if (length > 1) {
            out.append(bytes.substr(pos, length));
            pos += length;
            continue;
        }
        ++pos;
        if (byte == '\\')
            out += "\\\\";
        else if (byte == '\n')
            out += "\\n";
        else if (byte == '\t')
            out += "\\t";
        else if (byte == '\r')
            out += "\\r";
        else if (length == 1 && byte >= 0x20 && byte != 0x7f)
            out += static_cast<char>(byte);
        else {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            out += escaped;
        }
    }
    return out;
}

std::string printableText(std::string_view text, bool keepLineBreaks) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
        const auto byte = static_cast<unsigned char>(text[pos]);
        const std::size_t length = detail::wellFormedLength(text, pos);
        // U+0080..U+009F (C2 80..C2 9F) are control characters too (CSI is U+009B).
        const bool c1 =
            length == 2 && byte == 0xc2 && static_cast<unsigned char>(text[pos + 1]) < 0xa0;
        if (length > 1 && !c1) {
            out.append(text.substr(pos, length));
            pos += length;
            continue;
        }
        if (length == 1 && ((byte >= 0x20 && byte != 0x7f) ||
                            (keepLineBreaks && (byte == '\n' || byte == '\t')))) {
            out += static_cast<char>(byte);
            ++pos;
            continue;
        }
        for (std::size_t i = 0; i < (c1 ? 2 : 1); ++i, ++pos) {
            const auto b = static_cast<unsigned char>(text[pos]);
            if (b == '\n') {
                out += "\\n";
            } else if (b == '\t') {
                out += "\\t";
            } else {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\x%02x", b);
                out += escaped;
            }
        }
    }
    return out;
}

} // namespace inferscope::models
