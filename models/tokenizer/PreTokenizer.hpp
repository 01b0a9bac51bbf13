#pragma once
// The split rule of a byte-level BPE tokenizer (private to models/): text is cut into
// pieces by a list of regular expressions, each applied in turn to every piece the previous
// one left, and merges never cross a piece boundary. Rules are chosen by the GGUF name
// (tokenizer.ggml.pre) and follow llama.cpp's lists; matching is done by PCRE2 in UTF mode
// with Unicode properties (\p{L}, \p{N}, ...), never by hand-made character tables.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::models::detail {

class PreTokenizer {
public:
    // Throws ModelError for a name we do not know.
    explicit PreTokenizer(std::string_view name);
    ~PreTokenizer();
    PreTokenizer(PreTokenizer&&) noexcept;
    PreTokenizer& operator=(PreTokenizer&&) noexcept;

    static bool isKnown(std::string_view name);

    // Consecutive pieces covering all of text, which must be valid UTF-8. Text between two
    // matches of a pattern is a piece of its own, as in llama.cpp.
    std::vector<std::string_view> split(std::string_view text) const;

    // Whether a piece that is itself a token skips the merges (Llama-3 style).
    bool ignoresMerges() const { return ignoresMerges_; }

private:
    struct CompiledPattern;
    std::vector<std::unique_ptr<CompiledPattern>> patterns_;
    bool ignoresMerges_ = false;
};

} // namespace inferscope::models::detail
