#pragma once
// Token text -> id look-up shared by the tokenizers (private to models/); string_view keys
// can be looked up without building a std::string.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace inferscope::models::detail {

struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
        return std::hash<std::string_view>{}(text);
    }
};

class TokenIndex {
public:
    // A later token with the same text replaces an earlier one, as in llama.cpp.
    void add(std::string_view text, std::int32_t id) { ids_[std::string(text)] = id; }
    std::optional<std::int32_t> find(std::string_view text) const {
        const auto it = ids_.find(text);
        if (it == ids_.end()) return std::nullopt;
        return it->second;
    }

private:
    std::unordered_map<std::string, std::int32_t, TextHash, std::equal_to<>> ids_;
};

} // namespace inferscope::models::detail
