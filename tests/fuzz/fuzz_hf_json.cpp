// config.json and tokenizer.json readers on arbitrary text (the first byte picks which):
// strict JSON parsing, then the field checks; a tokenizer that is accepted must build and
// encode. Only ModelError may come out.
#include "models/ModelError.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/formats/StrictJson.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <string_view>

using namespace inferscope::models;

namespace {
// A small tokenizer_config.json, for the inputs that use one.
const nlohmann::json& tokenizerConfig() {
    static const nlohmann::json config = nlohmann::json::parse(
        R"({"add_bos_token": false, "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
            "chat_template": "{{ '<|im_start|>' }}"})");
    return config;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const int which = data[0] % 3;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const nlohmann::json json = parseStrictJson(text, "input.json");
        if (which == 0) {
            (void)parseHfConfig(json, "config.json");
            return 0;
        }
        TokenizerData tokenizerData =
            parseHfTokenizer(json, which == 2 ? &tokenizerConfig() : nullptr, "tokenizer.json");
        const Tokenizer tokenizer(std::move(tokenizerData));
        const auto ids = tokenizer.encode("Hello wörld, 12345!\n<|im_start|>user", true, true);
        (void)tokenizer.decode(ids);
    } catch (const ModelError&) {
    }
    return 0;
}
