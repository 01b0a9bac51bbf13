#pragma once
// Text <-> token ids for both tokenizer families of TokenizerData. Special and control
// tokens written literally in the text (e.g. "<|im_start|>") are matched as single tokens
// when parseSpecial is true.
#include "models/tokenizer/TokenizerData.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::models {

class Tokenizer {
public:
    // Throws ModelError if the data is inconsistent (unknown pre-tokenizer, a merge naming
    // a missing token, ids of BOS/EOS beyond the vocabulary, ...).
    explicit Tokenizer(TokenizerData data);
    ~Tokenizer();
    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;

    // addSpecial: prepend BOS / append EOS where the model asks for it (addBos / addEos).
    std::vector<std::int32_t> encode(std::string_view text, bool addSpecial = true,
                                     bool parseSpecial = true) const;
    // Concatenated bytes of the tokens (control tokens are rendered unless skipSpecial).
    std::string decode(std::span<const std::int32_t> ids, bool skipSpecial = false) const;
    // The bytes token `id` adds after the tokens decoded before it, with decode's state
    // between tokens (whether the next text token starts the text) in atTextStart, which
    // starts true: appending the pieces of a sequence one by one gives decode() of it.
    std::string decodeNext(std::int32_t id, bool skipSpecial, bool& atTextStart) const;
    // The bytes one token stands for (for display; may be an incomplete UTF-8 sequence).
    std::string pieceBytes(std::int32_t id) const;
    // The token's text as stored in the vocabulary (e.g. "Ġthe", "▁the", "<0x0A>").
    const std::string& tokenText(std::int32_t id) const;

    std::int32_t vocabSize() const;
    const TokenizerData& data() const;
    bool isControl(std::int32_t id) const;
    std::optional<std::int32_t> bos() const;
    std::optional<std::int32_t> eos() const;
    // Tokens that end a generation: EOS plus chat end markers such as <|im_end|>.
    std::vector<std::int32_t> stopTokens() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace inferscope::models
