#pragma once
// JSON from model files (safetensors headers, config.json, tokenizer.json) is untrusted.
// nlohmann::json silently keeps the last of two equal keys, so a hostile header could show
// one tensor to a checker and another to a loader; this parser refuses duplicates, limits
// nesting, and turns every syntax error into a ModelError with the byte offset.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace inferscope::models {

struct StrictJsonOptions {
    std::uint64_t baseOffset = 0; // where the text starts in its file (for error offsets)
    std::string field = "json";   // field named in errors
    int maxDepth = 64;
};

// Throws ModelError(file, field, byte offset, message) on invalid JSON, duplicate keys or
// nesting deeper than maxDepth.
nlohmann::json parseStrictJson(std::string_view text, const std::string& file,
                               const StrictJsonOptions& options = {});

// Reads a whole (small) JSON file; refuses files above maxBytes.
nlohmann::json readStrictJsonFile(const std::filesystem::path& path,
                                  std::uint64_t maxBytes = 256ull << 20);

} // namespace inferscope::models
