// HF config.json and tokenizer.json readers on files shaped like real checkpoints
// (SmolLM2, Llama 3.2, Qwen2, Mistral, a Llama-2-style SentencePiece tokenizer).
#include "models/ModelError.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/formats/StrictJson.hpp"

#include <QtTest>

using namespace inferscope::models;

namespace {

ModelConfig configOf(const std::string& text) {
    return parseHfConfig(parseStrictJson(text, "config.json"), "config.json");
}

TokenizerData tokenizerOf(const std::string& tokenizer, const std::string& tokenizerConfig = "") {
    const auto json = parseStrictJson(tokenizer, "tokenizer.json");
    if (tokenizerConfig.empty()) return parseHfTokenizer(json, nullptr, "tokenizer.json");
    const auto config = parseStrictJson(tokenizerConfig, "tokenizer_config.json");
    return parseHfTokenizer(json, &config, "tokenizer.json");
}

// Byte-level vocabulary shared by the byte-level cases: three specials, then tokens.
constexpr const char* byteLevelVocab =
    R"({"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2, "t": 3, "h": 4, "e": 5,
        "Ġ": 6, "th": 7, "the": 8, "Ġthe": 9, "1": 10})";
constexpr const char* byteLevelAdded = R"([
    {"id": 0, "content": "<|endoftext|>", "special": true},
    {"id": 1, "content": "<|im_start|>", "special": true},
    {"id": 2, "content": "<|im_end|>", "special": true}])";

std::string byteLevelTokenizer(const std::string& preTokenizer, const std::string& merges,
                               const std::string& postProcessor = "null") {
    return std::string(R"({"version": "1.0", "added_tokens": )") + byteLevelAdded +
           R"(, "normalizer": null, "pre_tokenizer": )" + preTokenizer + R"(, "post_processor": )" +
           postProcessor + R"(, "model": {"type": "BPE", "byte_fallback": false, "vocab": )" +
           byteLevelVocab + R"(, "merges": )" + merges + "}}";
}

// The split rules as they appear in tokenizer.json (JSON-escaped).
constexpr const char* llama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
constexpr const char* qwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
constexpr const char* gpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)";

std::string splitThenByteLevel(const char* regex) {
    return std::string(R"({"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": ")") +
           regex +
           R"("}, "behavior": "Isolated", "invert": false},
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]})";
}

} // namespace

class TestHfConfig : public QObject {
    Q_OBJECT
private slots:
    void readsSmolLm2Config();
    void readsLlama3ConfigWithRopeScaling();
    void readsRopeParameters();
    void refusesRopeLayoutsNotUnderstood();
    void readsQwen2Config();
    void readsMistralConfig();
    void defaultsAndArchitecturesOnly();
    void readsSmolLmTokenizer();
    void namesSplitRegexes();
    void readsLlama3StyleTokenizer();
    void fallsBackToAddedTokensWithoutConfig();
    void readsSentencePieceTokenizer();
    void readsMetaspaceTokenizer();
    void refusesFieldsThatChangeTheIds();
};

void TestHfConfig::readsSmolLm2Config() {
    const auto config = configOf(R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 576,
  "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
  "max_position_embeddings": 8192, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3, "pad_token_id": 2,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_interleaved": false, "rope_scaling": null,
  "rope_theta": 100000, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.42.3", "use_cache": true, "vocab_size": 49152})");
    QCOMPARE(config.architecture, std::string("llama"));
    QCOMPARE(config.layers, 30u);
    QCOMPARE(config.hiddenSize, 576u);
    QCOMPARE(config.heads, 9u);
    QCOMPARE(config.kvHeads, 3u);
    QCOMPARE(config.headDim, 64u);
    QCOMPARE(config.ffnSize, 1536u);
    QCOMPARE(config.vocabSize, 49152u);
    QCOMPARE(config.contextLength, 8192u);
    QCOMPARE(config.ropeTheta, 100000.0f);
    QCOMPARE(config.rmsNormEps, 1e-5f);
    QVERIFY(config.tiedEmbeddings);
    QVERIFY(!config.qkvBias);
    QCOMPARE(config.ropePairing, RopePairing::SplitHalf);
    QCOMPARE(config.ropeScaling.type, RopeScalingType::None);
    // The chapter's formula: 2 x 30 layers x 3 KV heads x 64 x 2 bytes.
    QCOMPARE(config.kvBytesPerToken(), std::uint64_t{23040});
}

void TestHfConfig::readsLlama3ConfigWithRopeScaling() {
    const auto config = configOf(R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "head_dim": 64,
  "hidden_size": 2048, "intermediate_size": 8192, "max_position_embeddings": 131072,
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": true,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "vocab_size": 128256})");
    QCOMPARE(config.ropeScaling.type, RopeScalingType::Llama3);
    QCOMPARE(config.ropeScaling.factor, 32.0f);
    QCOMPARE(config.ropeScaling.lowFreqFactor, 1.0f);
    QCOMPARE(config.ropeScaling.highFreqFactor, 4.0f);
    QCOMPARE(config.ropeScaling.originalContext, 8192u);
    QCOMPARE(config.ropeTheta, 500000.0f);
    QCOMPARE(config.headDim, 64u);
    QCOMPARE(config.queryGroupSize(), 4u);

    const auto linear = configOf(R"({"model_type": "llama", "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 4096, "num_attention_heads": 4,
        "num_hidden_layers": 1, "vocab_size": 100, "rope_scaling": {"type": "linear", "factor": 2}})");
    QCOMPARE(linear.ropeScaling.type, RopeScalingType::Linear);
    QCOMPARE(linear.ropeScaling.factor, 2.0f);
    QCOMPARE(linear.kvHeads, 4u); // defaults to the query heads
}

namespace {
// SmolLM2-135M's config.json as transformers 5 writes it: theta inside rope_parameters.
std::string smolLm2WithRope(const std::string& rope) {
    return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 576,
      "intermediate_size": 1536, "max_position_embeddings": 8192, "model_type": "llama",
      "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
      "rms_norm_eps": 1e-05, "tie_word_embeddings": true, "vocab_size": 49152, )" +
           rope + "}";
}
} // namespace

void TestHfConfig::readsRopeParameters() {
    const auto current = configOf(
        smolLm2WithRope(R"("rope_parameters": {"rope_theta": 100000.0, "rope_type": "default"})"));
    QCOMPARE(current.ropeTheta, 100000.0f); // not the 10000 default
    QCOMPARE(current.ropeScaling.type, RopeScalingType::None);
    // Both layouts at once, agreeing: fine.
    const auto both = configOf(smolLm2WithRope(
        R"("rope_theta": 100000, "rope_parameters": {"rope_theta": 100000.0, "rope_type": "default"})"));
    QCOMPARE(both.ropeTheta, 100000.0f);
    // Llama 3.2's scaling inside rope_parameters.
    const auto llama3 = configOf(smolLm2WithRope(
        R"("rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 32.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192})"));
    QCOMPARE(llama3.ropeTheta, 500000.0f);
    QCOMPARE(llama3.ropeScaling.type, RopeScalingType::Llama3);
    QCOMPARE(llama3.ropeScaling.factor, 32.0f);
    QCOMPARE(llama3.ropeScaling.originalContext, 8192u);
    const auto linear = configOf(smolLm2WithRope(
        R"("rope_parameters": {"rope_theta": 10000, "rope_type": "linear", "factor": 2.0})"));
    QCOMPARE(linear.ropeScaling.type, RopeScalingType::Linear);
    QCOMPARE(linear.ropeScaling.factor, 2.0f);
}

void TestHfConfig::refusesRopeLayoutsNotUnderstood() {
    const auto refusedNaming = [](const std::string& rope, const std::string& field,
                                  const std::string& words) {
        try {
            configOf(smolLm2WithRope(rope));
        } catch (const ModelError& error) {
            QCOMPARE(QString::fromStdString(error.field()), QString::fromStdString(field));
            QVERIFY2(QString(error.what()).contains(QString::fromStdString(words)), error.what());
            return;
        }
        QFAIL(qPrintable(QString::fromStdString("accepted: " + rope)));
    };
    refusedNaming(R"("rope_parameters": {"rope_theta": 1e6, "rope_type": "yarn", "factor": 4.0})",
                  "rope_parameters.rope_type", "yarn");
    refusedNaming(
        R"("rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "beta_fast": 32})",
        "rope_parameters.beta_fast", "does not understand");
    // Per-layer-type parameters (Gemma 3 style): sub-objects, not a layout we know.
    refusedNaming(
        R"("rope_parameters": {"full_attention": {"rope_theta": 1e6, "rope_type": "default"}})",
        "rope_parameters.full_attention", "does not understand");
    refusedNaming(R"("rope_parameters": {"rope_type": "default"})", "rope_parameters.rope_theta",
                  "missing");
    refusedNaming(R"("rope_parameters": {"rope_theta": 1e4})", "rope_parameters.rope_type",
                  "missing");
    refusedNaming(
        R"("rope_theta": 10000, "rope_parameters": {"rope_theta": 100000, "rope_type": "default"})",
        "rope_parameters.rope_theta", "contradicts");
    refusedNaming(R"("rope_parameters": {"rope_theta": 1e4, "rope_type": "llama3", "factor": 8})",
                  "rope_parameters.low_freq_factor", "missing");
    refusedNaming(
        R"("rope_parameters": {"rope_theta": 1e4, "rope_type": "default", "partial_rotary_factor": 0.5})",
        "rope_parameters.partial_rotary_factor", "partial RoPE");
    refusedNaming(R"("rope_parameters": [10000])", "rope_parameters", "object");
}

void TestHfConfig::readsQwen2Config() {
    const auto config = configOf(R"({
  "architectures": ["Qwen2ForCausalLM"], "bos_token_id": 151643, "eos_token_id": 151643,
  "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 24, "model_type": "qwen2",
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936})");
    QCOMPARE(config.architecture, std::string("qwen2"));
    QVERIFY(config.qkvBias);
    QCOMPARE(config.headDim, 64u);
    QCOMPARE(config.contextLength, 32768u);
    QCOMPARE(config.rmsNormEps, 1e-6f);
    QCOMPARE(config.ropePairing, RopePairing::SplitHalf);
}

void TestHfConfig::readsMistralConfig() {
    const auto config = configOf(R"({
  "architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "vocab_size": 32000})");
    QCOMPARE(config.architecture, std::string("mistral"));
    QVERIFY(!config.tiedEmbeddings);
    QVERIFY(!config.qkvBias);
    QCOMPARE(config.contextLength, 4096u); // attention is exact within the window
}

void TestHfConfig::defaultsAndArchitecturesOnly() {
    const auto config = configOf(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 256, "num_attention_heads": 4,
        "num_hidden_layers": 2, "vocab_size": 300})");
    QCOMPARE(config.architecture, std::string("qwen2"));
    QCOMPARE(config.ropeTheta, 10000.0f);
    QCOMPARE(config.rmsNormEps, 1e-6f);
    QVERIFY(!config.tiedEmbeddings);
    QCOMPARE(config.headDim, 16u);
}

void TestHfConfig::readsSmolLmTokenizer() {
    const auto data = tokenizerOf(byteLevelTokenizer(R"({"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]})",
                                                     R"(["t h", "th e", "Ġ the"])"),
                                  R"({"add_prefix_space": false,
            "bos_token": {"__type": "AddedToken", "content": "<|im_start|>", "special": true},
            "eos_token": "<|im_end|>", "pad_token": "<|im_end|>",
            "chat_template": "{% for message in messages %}<|im_start|>{{ message['content'] }}{% endfor %}"})");
    QCOMPARE(data.kind, TokenizerKind::ByteLevelBpe);
    QCOMPARE(data.preTokenizer, std::string("smollm"));
    QCOMPARE(data.tokens.size(), std::size_t{11});
    QCOMPARE(data.tokens[9], std::string("Ġthe"));
    QCOMPARE(data.merges, (std::vector<std::string>{"t h", "th e", "Ġ the"}));
    QCOMPARE(data.bosId, std::optional<std::int32_t>(1));
    QCOMPARE(data.eosId, std::optional<std::int32_t>(2));
    QCOMPARE(data.paddingId, std::optional<std::int32_t>(2));
    QVERIFY(!data.addBos);
    QVERIFY(!data.addEos);
    QVERIFY(data.scores.empty());
    QCOMPARE(data.tokenTypes.size(), data.tokens.size());
    QCOMPARE(data.tokenTypes[0], TokenType::Control);
    QCOMPARE(data.tokenTypes[2], TokenType::Control);
    QCOMPARE(data.tokenTypes[3], TokenType::Normal);
    QVERIFY(data.chatTemplate.starts_with("{% for message"));
}

void TestHfConfig::namesSplitRegexes() {
    QCOMPARE(tokenizerOf(byteLevelTokenizer(splitThenByteLevel(llama3Regex), "[]")).preTokenizer,
             std::string("llama-bpe"));
    QCOMPARE(tokenizerOf(byteLevelTokenizer(splitThenByteLevel(qwen2Regex), "[]")).preTokenizer,
             std::string("qwen2"));
    QCOMPARE(tokenizerOf(byteLevelTokenizer(splitThenByteLevel(gpt2Regex), "[]")).preTokenizer,
             std::string("gpt-2"));
    QCOMPARE(tokenizerOf(byteLevelTokenizer(R"({"type": "ByteLevel"})", "[]")).preTokenizer,
             std::string("gpt-2"));
    // The lone-digit split as a Split rather than Digits.
    QCOMPARE(tokenizerOf(byteLevelTokenizer(R"({"type": "Sequence", "pretokenizers": [
                 {"type": "Split", "pattern": {"Regex": "\\p{N}"}, "behavior": "Isolated"},
                 {"type": "ByteLevel", "use_regex": true}]})",
                                            "[]"))
                 .preTokenizer,
             std::string("smollm"));
    QVERIFY(preTokenizerNameForRegex("\\w+").empty());
    // One character off is not the same rule.
    std::string almost =
        R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
    QCOMPARE(preTokenizerNameForRegex(almost), std::string("gpt-2"));
    almost.back() = '*';
    QVERIFY(preTokenizerNameForRegex(almost).empty());
}

void TestHfConfig::readsLlama3StyleTokenizer() {
    // Merges as [left, right] pairs; BOS added by the post-processor template.
    const auto data = tokenizerOf(byteLevelTokenizer(splitThenByteLevel(llama3Regex),
                                                     R"([["t", "h"], ["th", "e"]])",
                                                     R"({"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [], "special_tokens": {}}]})"),
                                  R"({"bos_token": "<|im_start|>", "eos_token": "<|endoftext|>",
            "chat_template": [{"name": "tool_use", "template": "tools"},
                              {"name": "default", "template": "plain"}]})");
    QCOMPARE(data.preTokenizer, std::string("llama-bpe"));
    QCOMPARE(data.merges, (std::vector<std::string>{"t h", "th e"}));
    QVERIFY(data.addBos);
    QVERIFY(!data.addEos);
    QCOMPARE(data.bosId, std::optional<std::int32_t>(1));
    QCOMPARE(data.eosId, std::optional<std::int32_t>(0));
    QCOMPARE(data.chatTemplate, std::string("plain"));

    // An explicit add_bos_token wins over the template.
    const auto explicitFalse =
        tokenizerOf(byteLevelTokenizer(R"({"type": "ByteLevel"})", "[]",
                                       R"({"type": "TemplateProcessing", "single": [
                               {"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
                               {"Sequence": {"id": "A", "type_id": 0}}]})"),
                    R"({"bos_token": "<|im_start|>", "add_bos_token": false})");
    QVERIFY(!explicitFalse.addBos);
    // A bos_token that names nothing is an error.
    QVERIFY_THROWS_EXCEPTION(ModelError,
                             tokenizerOf(byteLevelTokenizer(R"({"type": "ByteLevel"})", "[]"),
                                         R"({"bos_token": "<s>"})"));
}

void TestHfConfig::fallsBackToAddedTokensWithoutConfig() {
    const auto data = tokenizerOf(byteLevelTokenizer(splitThenByteLevel(qwen2Regex), "[]"));
    QCOMPARE(data.bosId, std::optional<std::int32_t>(0)); // <|endoftext|>
    QCOMPARE(data.eosId, std::optional<std::int32_t>(0));
    QVERIFY(data.chatTemplate.empty());
    // An explicit null in tokenizer_config.json means "none", not "guess".
    const auto none =
        tokenizerOf(byteLevelTokenizer(R"({"type": "ByteLevel"})", "[]"), R"({"bos_token": null})");
    QVERIFY(!none.bosId);
    QCOMPARE(none.eosId, std::optional<std::int32_t>(0));
}

void TestHfConfig::readsSentencePieceTokenizer() {
    // As Llama-2 / Mistral tokenizer.json files are written (legacy normalizer form).
    const auto data = tokenizerOf(R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true},
    {"id": 1, "content": "<s>", "special": true},
    {"id": 2, "content": "</s>", "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [], "special_tokens": {}},
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true,
    "byte_fallback": true,
    "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x00>": 3, "<0x0A>": 4, "▁": 5, "t": 6, "h": 7,
              "▁t": 8, "he": 9, "▁the": 10, "e": 11},
    "merges": ["▁ t", "h e", "▁t he"]}})");
    QCOMPARE(data.kind, TokenizerKind::SentencePieceBpe);
    QVERIFY(data.addSpacePrefix);
    QVERIFY(data.addBos);
    QVERIFY(!data.addEos);
    QCOMPARE(data.bosId, std::optional<std::int32_t>(1));
    QCOMPARE(data.eosId, std::optional<std::int32_t>(2));
    QCOMPARE(data.unknownId, std::optional<std::int32_t>(0));
    QCOMPARE(data.tokenTypes[0], TokenType::Unknown);
    QCOMPARE(data.tokenTypes[1], TokenType::Control);
    QCOMPARE(data.tokenTypes[3], TokenType::Byte);
    QCOMPARE(data.tokenTypes[4], TokenType::Byte);
    QCOMPARE(data.tokenTypes[5], TokenType::Normal);
    // Scores from merge ranks: earlier merges score higher, unmerged tokens lowest.
    QCOMPARE(data.scores.size(), data.tokens.size());
    QCOMPARE(data.scores[8], 0.0f);   // "▁t", merge 0
    QCOMPARE(data.scores[9], -1.0f);  // "he", merge 1
    QCOMPARE(data.scores[10], -2.0f); // "▁the", merge 2
    QCOMPARE(data.scores[6], -3.0f);  // "t": no merge makes it
    QVERIFY(data.scores[8] > data.scores[9] && data.scores[9] > data.scores[10]);
}

void TestHfConfig::readsMetaspaceTokenizer() {
    auto withScheme = [](const char* scheme) {
        return tokenizerOf(
            std::string(R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁",
            "prepend_scheme": ")") +
            scheme + R"(", "split": false},
            "model": {"type": "BPE", "byte_fallback": true, "vocab": {"▁": 0, "a": 1, "▁a": 2},
                      "merges": [["▁", "a"]]}})");
    };
    const auto first = withScheme("first");
    QCOMPARE(first.kind, TokenizerKind::SentencePieceBpe);
    QVERIFY(first.addSpacePrefix);
    QCOMPARE(first.merges, (std::vector<std::string>{"▁ a"}));
    QVERIFY(!withScheme("never").addSpacePrefix);
}

// Fields of tokenizer.json that would change the ids and that this tokenizer does not apply
// are refused naming the field (issue 49, item 4), never silently ignored.
void TestHfConfig::refusesFieldsThatChangeTheIds() {
    const std::string good = byteLevelTokenizer(R"({"type": "ByteLevel"})", "[]");
    auto refusedNaming = [&](const std::string& from, const std::string& to,
                             const std::string& field) {
        std::string json = good;
        const auto at = json.find(from);
        QVERIFY2(at != std::string::npos, from.c_str());
        json.replace(at, from.size(), to);
        try {
            tokenizerOf(json);
            QFAIL(("accepted " + to).c_str());
        } catch (const ModelError& error) {
            QVERIFY2(error.field() == field &&
                         error.reason().find("not supported") != std::string::npos,
                     error.what());
        }
    };
    const std::string normalizer = R"("normalizer": null)";
    for (const std::string type : {"Lowercase", "NFKC", "NFD", "NFKD", "StripAccents"})
        refusedNaming(normalizer, R"("normalizer": {"type": ")" + type + R"("})", "normalizer[0]");
    refusedNaming(normalizer,
                  R"("normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"},
                      {"type": "Lowercase"}]})",
                  "normalizer[1]");
    const std::string model = R"("model": {"type": "BPE",)";
    refusedNaming(model, model + R"( "continuing_subword_prefix": "##",)",
                  "model.continuing_subword_prefix");
    refusedNaming(model, model + R"( "end_of_word_suffix": "</w>",)", "model.end_of_word_suffix");
    refusedNaming(model, model + R"( "ignore_merges": true,)", "model.ignore_merges");
    const std::string added = R"({"id": 1, "content": "<|im_start|>", "special": true})";
    refusedNaming(added, R"({"id": 1, "content": "<|im_start|>", "special": true, "lstrip": true})",
                  "added_tokens[1].lstrip");
    refusedNaming(added,
                  R"({"id": 1, "content": "<|im_start|>", "special": true, "single_word": true})",
                  "added_tokens[1].single_word");
    // What is applied or changes nothing stays accepted: NFC, null or empty options, false
    // flags.
    std::string accepted = good;
    accepted.replace(accepted.find(normalizer), normalizer.size(),
                     R"("normalizer": {"type": "NFC"})");
    accepted.replace(accepted.find(model), model.size(),
                     model + R"( "continuing_subword_prefix": "", "end_of_word_suffix": null,
                              "ignore_merges": false,)");
    QCOMPARE(tokenizerOf(accepted).kind, TokenizerKind::ByteLevelBpe);
}

QTEST_APPLESS_MAIN(TestHfConfig)
#include "test_hf_config.moc"
