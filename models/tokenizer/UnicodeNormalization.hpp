#pragma once
// Unicode normalization for tokenizer.json files whose normalizer is NFC (Qwen2's, Llama-2's
// legacy layout): the Hugging Face library composes the text before it splits and merges, so
// a decomposed "e" + U+0301 must reach the merges as "é". ICU does the composition; GGUF
// tokenizers never normalize (llama.cpp does not).
#include <string>
#include <string_view>

namespace inferscope::models::detail {

// The text in Normalization Form C. Text that is not well-formed UTF-8 is returned unchanged
// (the tokenizers handle such bytes themselves), as is pure ASCII (already NFC).
std::string composeNfc(std::string_view utf8);

} // namespace inferscope::models::detail
