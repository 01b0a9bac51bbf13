#pragma once
// The synthetic models' tokenizer: a small byte-level BPE vocabulary trained on a built-in
// English text, with three ChatML specials, and its chat template.
#include "models/tokenizer/TokenizerData.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::models {

struct SyntheticVocabulary {
    std::vector<std::string> tokens;
    std::vector<TokenType> types;
    std::vector<std::string> merges; // "left right", best first
    std::int32_t bos = 0, eos = 0;
};

// 256 byte tokens, merges up to vocabSize - 3, then <|endoftext|>, <|im_start|> (bos) and
// <|im_end|> (eos). Throws ModelError below 259 tokens.
SyntheticVocabulary buildVocabulary(std::uint32_t vocabSize);

// ChatML, the format of the default model's template family.
extern const char* const syntheticChatTemplate;

} // namespace inferscope::models
