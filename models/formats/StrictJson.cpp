#include "models/formats/StrictJson.hpp"

#include "models/ModelError.hpp"

#include <fstream>
#include <map>
#include <set>
#include <vector>

namespace inferscope::models {

namespace {

// Where the key's n-th occurrence (counting from 1) as an object key sits in the text:
// the quoted key followed by optional whitespace and a colon. Approximate when the text
// spells the key with escapes; only used to point error messages at the right place.
std::optional<std::uint64_t> keyOffset(std::string_view text, const std::string& key,
                                       int occurrence) {
    const std::string quoted = nlohmann::json(key).dump();
    std::size_t position = 0;
    int seen = 0;
    while ((position = text.find(quoted, position)) != std::string_view::npos) {
        std::size_t after = position + quoted.size();
        while (after < text.size() && (text[after] == ' ' || text[after] == '\t' ||
                                       text[after] == '\n' || text[after] == '\r'))
            ++after;
        if (after < text.size() && text[after] == ':' && ++seen == occurrence) return position;
        position += quoted.size();
    }
    return std::nullopt;
}

} // namespace

nlohmann::json parseStrictJson(std::string_view text, const std::string& file,
                               const StrictJsonOptions& options) {
    // One set of keys per open object; keys seen so far anywhere, to locate duplicates.
    std::vector<std::set<std::string>> openObjects;
    std::map<std::string, int> keyCounts;
    auto callback = [&](int depth, nlohmann::json::parse_event_t event,
                        nlohmann::json& parsed) -> bool {
        using Event = nlohmann::json::parse_event_t;
        if (depth > options.maxDepth)
            throw ModelError(file, options.field, options.baseOffset,
                             "JSON nested deeper than " + std::to_string(options.maxDepth) +
                                 " levels");
        switch (event) {
        case Event::object_start:
            openObjects.emplace_back();
            break;
        case Event::object_end:
            if (!openObjects.empty()) openObjects.pop_back();
            break;
        case Event::key: {
            const std::string& key = parsed.get_ref<const std::string&>();
            const int occurrence = ++keyCounts[key];
            if (!openObjects.empty() && !openObjects.back().insert(key).second) {
                auto at = keyOffset(text, key, occurrence);
                throw ModelError(file, options.field,
                                 at ? std::optional(options.baseOffset + *at) : std::nullopt,
                                 "duplicate key \"" + key + "\" in one JSON object");
            }
            break;
        }
        default:
            break;
        }
        return true;
    };
    try {
        return nlohmann::json::parse(text.begin(), text.end(), callback);
    } catch (const nlohmann::json::parse_error& error) {
        // error.byte counts from 1 and points just past the offending character.
        const std::uint64_t at = error.byte > 0 ? error.byte - 1 : 0;
        throw ModelError(file, options.field, options.baseOffset + at,
                         std::string("invalid JSON: ") + error.what());
    } catch (const nlohmann::json::exception& error) {
        throw ModelError(file, options.field, options.baseOffset,
                         std::string("invalid JSON: ") + error.what());
    }
}

nlohmann::json readStrictJsonFile(const std::filesystem::path& path, std::uint64_t maxBytes) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) throw ModelError(path.string(), "", std::nullopt, "cannot open file");
    std::error_code error;
    const std::uint64_t size = std::filesystem::file_size(path, error);
    if (error) throw ModelError(path.string(), "", std::nullopt, "cannot read file size");
    if (size > maxBytes)
        throw ModelError(path.string(), "", std::nullopt,
                         "JSON file of " + std::to_string(size) + " bytes exceeds the limit of " +
                             std::to_string(maxBytes));
    std::string text(size, '\0');
    if (size > 0 && !stream.read(text.data(), static_cast<std::streamsize>(size)))
        throw ModelError(path.string(), "", std::nullopt, "cannot read file");
    return parseStrictJson(text, path.string(), {.baseOffset = 0, .field = "json"});
}

} // namespace inferscope::models
