#include "models/tokenizer/TextStream.hpp"

#include <algorithm>

namespace inferscope::models {

namespace {
// Length of the longest prefix of bytes that ends on a complete UTF-8 character.
std::size_t completeUtf8Prefix(const std::string& bytes) {
    std::size_t end = bytes.size();
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, bytes.size()); ++back) {
        auto byte = static_cast<unsigned char>(bytes[bytes.size() - back]);
        if ((byte & 0xC0) == 0x80) continue; // continuation byte: look further back
        std::size_t need = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
        if (need > back) end = bytes.size() - back;
        break;
    }
    return end;
}
} // namespace

std::string TextStream::add(std::int32_t id) {
    pending_ += tokenizer_.decodeNext(id, skipSpecial_, atTextStart_);
    const std::size_t complete = completeUtf8Prefix(pending_);
    std::string text = pending_.substr(0, complete);
    pending_.erase(0, complete);
    return text;
}

} // namespace inferscope::models
