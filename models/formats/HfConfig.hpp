#pragma once
// Hugging Face model folders: config.json -> ModelConfig, tokenizer.json (+ the optional
// tokenizer_config.json) -> TokenizerData. Both files are untrusted: every field is
// type-checked and errors name the file and the field.
#include "models/ModelConfig.hpp"
#include "models/tokenizer/TokenizerData.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace inferscope::models {

// LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM checkpoints. RoPE pairing is
// always split-half (HF keeps Q/K rows unpermuted); qwen2 has q/k/v biases.
ModelConfig parseHfConfig(const nlohmann::json& config, const std::string& source);
// Also names the model after its folder.
ModelConfig readHfConfig(const std::filesystem::path& configJson);

// tokenizerConfig may be null (no tokenizer_config.json); configSource names it in errors.
TokenizerData parseHfTokenizer(const nlohmann::json& tokenizer,
                               const nlohmann::json* tokenizerConfig, const std::string& source,
                               const std::string& configSource = "tokenizer_config.json");
// tokenizerConfigJson is read when it exists.
TokenizerData readHfTokenizer(const std::filesystem::path& tokenizerJson,
                              const std::filesystem::path& tokenizerConfigJson);

// The tokenizer.ggml.pre name of a known pre-tokenizer split regex ("gpt-2", "llama-bpe",
// "qwen2", "smollm" for the lone-digit split), or empty when the regex is not known.
std::string preTokenizerNameForRegex(std::string_view regex);

} // namespace inferscope::models
