#include "models/formats/StrictJson.hpp"

#include "models/ModelError.hpp"
#include "models/formats/RegularFile.hpp"

#include <algorithm>
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

// The line (from 1) of a byte offset in the text.
std::uint64_t lineAt(std::string_view text, std::uint64_t offset) {
    const auto end = text.begin() + std::ptrdiff_t(std::min<std::uint64_t>(offset, text.size()));
    return 1 + std::uint64_t(std::count(text.begin(), end, '\n'));
}

// Where the nesting first goes past maxDepth (brackets outside strings), before the parser
// builds anything: 40 MB of '[' is refused at byte 64, not after gigabytes of nodes.
std::optional<std::uint64_t> tooDeepAt(std::string_view text, int maxDepth) {
    int depth = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"')
            inString = true;
        else if (c == '[' || c == '{') {
            if (++depth > maxDepth) return i;
        } else if (c == ']' || c == '}')
            --depth;
    }
    return std::nullopt;
}

} // namespace

nlohmann::json parseStrictJson(std::string_view text, const std::string& file,
                               const StrictJsonOptions& options) {
    // Errors name the file, the line and, for a limit, the limit.
    auto fail = [&](std::optional<std::uint64_t> at, const std::string& why) -> ModelError {
        return ModelError(file, options.field,
                          at ? std::optional(options.baseOffset + *at) : std::nullopt,
                          at ? "line " + std::to_string(lineAt(text, *at)) + ": " + why : why);
    };
    if (const auto at = tooDeepAt(text, options.maxDepth))
        throw fail(*at, "JSON nested deeper than the limit of " + std::to_string(options.maxDepth) +
                            " levels");
    // One set of keys per open object; keys seen so far anywhere, to locate duplicates.
    std::vector<std::set<std::string>> openObjects;
    std::map<std::string, int> keyCounts;
    auto callback = [&](int depth, nlohmann::json::parse_event_t event,
                        nlohmann::json& parsed) -> bool {
        using Event = nlohmann::json::parse_event_t;
        if (depth > options.maxDepth)
            throw fail(std::nullopt, "JSON nested deeper than the limit of " +
                                         std::to_string(options.maxDepth) + " levels");
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
                throw fail(keyOffset(text, key, occurrence),
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
        throw fail(at, std::string("invalid JSON: ") + error.what());
    } catch (const nlohmann::json::exception& error) {
        throw ModelError(file, options.field, options.baseOffset,
                         std::string("invalid JSON: ") + error.what());
    }
}

nlohmann::json readStrictJsonFile(const std::filesystem::path& path, std::uint64_t maxBytes) {
    std::string text;
    try {
        text = RegularFile::open(path).readAll(maxBytes, "a JSON file");
    } catch (const FileError& e) {
        throw ModelError(path.string(), "", std::nullopt, e.reason());
    }
    return parseStrictJson(text, path.string(), {.baseOffset = 0, .field = "json"});
}

} // namespace inferscope::models
