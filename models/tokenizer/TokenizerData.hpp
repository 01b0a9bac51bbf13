#pragma once
// Everything a tokenizer needs, as read from GGUF metadata (tokenizer.ggml.*) or an HF
// tokenizer.json; the Tokenizer is built from this, independent of the file format.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::models {

enum class TokenizerKind {
    ByteLevelBpe,     // GPT-2 style: bytes mapped to printable code points, ranked merges
    SentencePieceBpe, // Llama-2 style: scores, "▁" for spaces, <0xXX> byte fallback
};

// Token types as GGUF numbers them (tokenizer.ggml.token_type).
enum class TokenType : std::int32_t {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct TokenizerData {
    TokenizerKind kind = TokenizerKind::ByteLevelBpe;
    // Pre-tokenizer (split rule) name as in tokenizer.ggml.pre: "smollm", "llama-bpe",
    // "qwen2", "gpt-2", "default", ... tokenizer.json readers map their regex to one of these.
    std::string preTokenizer = "default";
    std::vector<std::string> tokens;
    std::vector<float> scores;         // empty when the file has none
    std::vector<TokenType> tokenTypes; // empty when the file has none (all Normal)
    std::vector<std::string> merges;   // "left right", best rank first (byte-level BPE)
    std::optional<std::int32_t> bosId, eosId, unknownId, paddingId;
    bool addBos = false;
    bool addEos = false;
    bool addSpacePrefix = false; // SentencePiece: prepend "▁" to the text
    bool normalizeNfc = false;   // compose text to NFC before splitting (tokenizer.json's NFC)
    // A Metaspace pre-tokenizer (tokenizer.json) prepends no "▁" to text that already starts
    // with a space, and with prepend_scheme "first" only to text at the start of the input.
    bool spacePrefixUnlessSpace = false;
    bool spacePrefixAtInputStartOnly = false;
    // tokenizer.json's decoders (Strip, Metaspace) drop the prefix space once, from the first
    // piece decoded; GGUF tokenizers drop it after every special token too (see decodeNext).
    bool decodeStripsFirstPieceOnly = false;
    std::string chatTemplate; // Jinja text from the file: untrusted, never evaluated
    std::string source;       // the file it was read from, named in the Tokenizer's errors
};

} // namespace inferscope::models
