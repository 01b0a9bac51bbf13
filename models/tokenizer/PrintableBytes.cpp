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

} // namespace inferscope::models
