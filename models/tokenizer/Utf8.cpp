#include "models/tokenizer/Utf8.hpp"

namespace inferscope::models::detail {

void appendUtf8(std::string& out, char32_t codePoint) {
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codePoint >> 18));
        out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
}

std::size_t wellFormedLength(std::string_view text, std::size_t pos) {
    const auto byteAt = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const auto inRange = [&](std::size_t i, unsigned low, unsigned high) {
        return i < text.size() && byteAt(i) >= low && byteAt(i) <= high;
    };
    const unsigned lead = byteAt(pos);
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return inRange(pos + 1, 0x80, 0xBF) ? 2 : 0;
    if (lead >= 0xE0 && lead <= 0xEF) {
        // E0 needs A0..BF (no overlong form), ED needs 80..9F (no surrogates).
        const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
        const unsigned high = lead == 0xED ? 0x9F : 0xBF;
        return inRange(pos + 1, low, high) && inRange(pos + 2, 0x80, 0xBF) ? 3 : 0;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        // F0 needs 90..BF (no overlong form), F4 needs 80..8F (nothing above U+10FFFF).
        const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
        const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
        return inRange(pos + 1, low, high) && inRange(pos + 2, 0x80, 0xBF) &&
                       inRange(pos + 3, 0x80, 0xBF)
                   ? 4
                   : 0;
    }
    return 0;
}

char32_t decodeUtf8(std::string_view text, std::size_t pos, std::size_t length) {
    const auto byteAt = [&](std::size_t i) {
        return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i]));
    };
    switch (length) {
    case 1:
        return byteAt(0);
    case 2:
        return ((byteAt(0) & 0x1F) << 6) | (byteAt(1) & 0x3F);
    case 3:
        return ((byteAt(0) & 0x0F) << 12) | ((byteAt(1) & 0x3F) << 6) | (byteAt(2) & 0x3F);
    default:
        return ((byteAt(0) & 0x07) << 18) | ((byteAt(1) & 0x3F) << 12) | ((byteAt(2) & 0x3F) << 6) |
               (byteAt(3) & 0x3F);
    }
}

std::string sanitizeUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t length = wellFormedLength(text, pos);
        if (length == 0) {
            appendUtf8(out, kReplacementCharacter);
            ++pos;
        } else {
            out.append(text.substr(pos, length));
            pos += length;
        }
    }
    return out;
}

std::size_t claimedUtf8Length(unsigned char leadByte) {
    if (leadByte < 0xC0) return 1;
    if (leadByte < 0xE0) return 2;
    if (leadByte < 0xF0) return 3;
    return 4;
}

} // namespace inferscope::models::detail
