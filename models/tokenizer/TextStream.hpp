#pragma once
// A generation's text as its tokens arrive: each token's bytes appended with decode()'s state
// between tokens (Tokenizer::decodeNext), handed on in complete UTF-8 characters only, so a
// token that carries half of a character waits for the rest. The pieces handed on, joined,
// are decode(ids) of the tokens so far (less a character still incomplete), at one token's
// cost per token instead of decoding the whole text again.
#include "models/tokenizer/Tokenizer.hpp"

#include <cstdint>
#include <string>

namespace inferscope::models {

class TextStream {
public:
    explicit TextStream(const Tokenizer& tokenizer, bool skipSpecial = true)
        : tokenizer_(tokenizer), skipSpecial_(skipSpecial) {}
    // The complete characters the token completes (empty while a character is unfinished).
    std::string add(std::int32_t id);
    // Bytes held back: the start of a character not yet complete.
    const std::string& pending() const { return pending_; }

private:
    const Tokenizer& tokenizer_;
    bool skipSpecial_;
    bool atTextStart_ = true;
    std::string pending_;
};

} // namespace inferscope::models
