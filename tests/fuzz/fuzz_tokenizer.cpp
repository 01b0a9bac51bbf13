// The tokenizer on arbitrary text: the byte-level BPE of a synthetic model under each
// pre-tokenizer we know, and a real SentencePiece vocabulary (tests/data). The first byte
// picks the tokenizer and whether special tokens are parsed. Byte-level BPE must give the
// text back: decode(encode(text)) is the text with invalid UTF-8 replaced (as llama.cpp).
#include "FuzzInput.hpp"
#include "models/LoadedModel.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/tokenizer/Tokenizer.hpp"
#include "models/tokenizer/Utf8.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

using namespace inferscope::models;

namespace {

std::vector<Tokenizer> makeTokenizers() {
    std::vector<Tokenizer> tokenizers;
    const auto file = inferscope::fuzz::scratchFolder() / "tokenizer.gguf";
    writeSyntheticGguf(inferscope::fuzz::seedModelSpec(), file);
    const TokenizerData byteLevel = loadGgufModel(file).tokenizer;
    for (const char* pre : {"smollm", "llama-bpe", "qwen2", "gpt-2", "default"}) {
        TokenizerData data = byteLevel;
        data.preTokenizer = pre;
        tokenizers.emplace_back(std::move(data));
    }
    const GgufFile spm = GgufFile::open(INFERSCOPE_TEST_DATA "/tokenizer-spm-vocab.gguf");
    TokenizerData data;
    data.kind = TokenizerKind::SentencePieceBpe;
    data.tokens = *spm.getStringArray("tokenizer.ggml.tokens");
    // Held by name: a range-for over *getNumberArray(...) would outlive the optional.
    const auto scores = spm.getNumberArray("tokenizer.ggml.scores");
    for (double score : scores.value()) data.scores.push_back(static_cast<float>(score));
    if (auto types = spm.getNumberArray("tokenizer.ggml.token_type"))
        for (double type : *types) data.tokenTypes.push_back(static_cast<TokenType>(int(type)));
    data.bosId = 1;
    data.eosId = 2;
    data.unknownId = 0;
    data.addBos = true;
    data.addSpacePrefix = true;
    tokenizers.emplace_back(std::move(data));
    return tokenizers;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::vector<Tokenizer> tokenizers = makeTokenizers();
    if (size == 0) return 0;
    const std::size_t which = data[0] % tokenizers.size();
    const bool parseSpecial = (data[0] / tokenizers.size()) % 2 == 1;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const Tokenizer& tokenizer = tokenizers[which];
    const auto ids = tokenizer.encode(text, true, parseSpecial);
    for (auto id : ids)
        if (id < 0 || id >= tokenizer.vocabSize()) std::abort();
    const std::string decoded = tokenizer.decode(ids, false);
    if (tokenizer.data().kind == TokenizerKind::ByteLevelBpe &&
        decoded != detail::sanitizeUtf8(text)) {
        std::fprintf(stderr, "byte-level round trip changed the text (tokenizer %zu)\n", which);
        std::abort();
    }
    return 0;
}
