// Synthetic models: deterministic weights from a seeded generator, planted outlier
// dimensions, and a small byte-level BPE tokenizer trained on a built-in English text,
// written as GGUF (llama.cpp conventions) or as an HF safetensors folder.
#include "models/synthetic/SyntheticModel.hpp"

#include "models/ModelError.hpp"
#include "models/formats/GgufWriter.hpp"
#include "models/formats/SafetensorsWriter.hpp"
#include "models/formats/TensorNames.hpp"
#include "models/quant/GgmlQuantize.hpp"
#include "models/tokenizer/TokenizerData.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <string_view>

namespace inferscope::models {

namespace {

constexpr std::uint32_t byteTokenCount = 256;
constexpr const char* endOfText = "<|endoftext|>";
constexpr const char* imStart = "<|im_start|>";
constexpr const char* imEnd = "<|im_end|>";
constexpr std::uint32_t specialTokenCount = 3;

// ChatML, the format of the default model's template family.
constexpr const char* chatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

// Text the tokenizer's merges are learned from: plain English, so common pairs ("th",
// "Ġthe", "ing") become tokens as they do in real vocabularies.
constexpr std::string_view trainingText =
    "The keeper of the lighthouse rose early, as he had done every morning for thirty years. "
    "He climbed the stairs, trimmed the wick and looked out over the grey water. There was a "
    "ship on the horizon, and he watched it for a long time while the kettle was boiling. "
    "When the wind turned to the north, the waves grew higher and the gulls went inland. "
    "In the evening he wrote in his log: the weather is changing, the ship has passed, the "
    "light is burning. Nothing else happened that day, and nothing needed to happen. "
    "People in the village said that he was lonely, but he did not think so. He had his "
    "books, his garden behind the wall, and the long conversations with the postman who came "
    "on Thursdays. They talked about the price of bread, the school that was going to close, "
    "and the storms that they remembered from when they were young. "
    "A model that reads this text learns which letters follow each other: that the comes "
    "before many nouns, that words ending in ing are common, and that there is a space "
    "between most of them. Counting pairs and merging the most frequent one, again and again, "
    "is all that byte pair encoding does. It is a simple idea, and it works well enough that "
    "nearly every language model in use today starts with it. "
    "Numbers such as 1, 2, 10, 42 and 2024 appear too, as do questions: what is the time? "
    "Where are you going? The answer is often shorter than the question.";

// --- Deterministic random numbers ----------------------------------------------------

// splitmix64: tiny, fast, and identical on every platform (unlike std distributions).
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in (0, 1]: never 0, so its logarithm is finite.
    double uniformOpenZero() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

// Standard normal values by Box-Muller.
class NormalGenerator {
public:
    explicit NormalGenerator(std::uint64_t seed) : bits_(seed) {}
    double next() {
        if (hasSpare_) {
            hasSpare_ = false;
            return spare_;
        }
        const double radius = std::sqrt(-2.0 * std::log(bits_.uniformOpenZero()));
        const double angle = 2.0 * std::numbers::pi * bits_.uniformOpenZero();
        spare_ = radius * std::sin(angle);
        hasSpare_ = true;
        return radius * std::cos(angle);
    }

private:
    SplitMix64 bits_;
    bool hasSpare_ = false;
    double spare_ = 0.0;
};

// Each tensor gets its own stream, derived from the model seed and its name, so a tensor's
// values do not depend on which other tensors exist or the order they are made in.
std::uint64_t streamSeed(std::uint64_t seed, std::string_view name) {
    std::uint64_t hash = 0xCBF29CE484222325ull; // FNV-1a
    for (unsigned char c : name) hash = (hash ^ c) * 0x100000001B3ull;
    return SplitMix64(seed ^ hash).next();
}

std::vector<float> normalValues(std::uint64_t seed, std::string_view name, std::size_t count,
                                double mean, double deviation) {
    NormalGenerator generator(streamSeed(seed, name));
    std::vector<float> values(count);
    for (float& value : values) value = static_cast<float>(mean + deviation * generator.next());
    return values;
}

// --- Tokenizer -------------------------------------------------------------------------

std::string utf8(std::uint32_t codePoint) {
    std::string out;
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
    return out;
}

// GPT-2's byte -> printable character table: printable Latin-1 bytes stand for
// themselves, the others (controls, space, ...) for 256, 257, ... in byte order.
std::vector<std::string> byteLevelAlphabet() {
    std::vector<std::string> alphabet(byteTokenCount);
    std::uint32_t next = 256;
    for (std::uint32_t byte = 0; byte < byteTokenCount; ++byte) {
        const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                               (byte >= 0xAE && byte <= 0xFF);
        alphabet[byte] = utf8(printable ? byte : next++);
    }
    return alphabet;
}

// Pieces as GPT-2's split rule cuts plain ASCII: an optional space and then a run of
// letters, of digits, or of other symbols; runs of whitespace stand alone.
std::vector<std::string_view> splitPieces(std::string_view text) {
    auto kind = [](char c) {
        if (std::isalpha(static_cast<unsigned char>(c))) return 0;
        if (std::isdigit(static_cast<unsigned char>(c))) return 1;
        if (std::isspace(static_cast<unsigned char>(c))) return 2;
        return 3;
    };
    std::vector<std::string_view> pieces;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        if (text[i] == ' ' && i + 1 < text.size() && kind(text[i + 1]) != 2) ++i;
        const int runKind = kind(text[i]);
        while (i < text.size() && kind(text[i]) == runKind) ++i;
        pieces.push_back(text.substr(start, i - start));
    }
    return pieces;
}

struct SyntheticVocabulary {
    std::vector<std::string> tokens;
    std::vector<TokenType> types;
    std::vector<std::string> merges; // "left right", best first
    std::int32_t bos = 0, eos = 0;
};

SyntheticVocabulary buildVocabulary(std::uint32_t vocabSize) {
    if (vocabSize < byteTokenCount + specialTokenCount)
        throw ModelError("synthetic model", "vocabSize", std::nullopt,
                         "needs at least 259 tokens (256 bytes and 3 specials), got " +
                             std::to_string(vocabSize));
    const std::size_t target = vocabSize - specialTokenCount;
    const auto alphabet = byteLevelAlphabet();
    SyntheticVocabulary vocabulary;
    vocabulary.tokens = alphabet;
    std::set<std::string> known(alphabet.begin(), alphabet.end());
    auto addMerge = [&](const std::string& left, const std::string& right) {
        vocabulary.merges.push_back(left + " " + right);
        if (known.insert(left + right).second) vocabulary.tokens.push_back(left + right);
    };

    // Byte-pair training: count adjacent symbols inside words, merge the most frequent pair
    // (ties: the smallest pair, for determinism), until pairs stop repeating.
    std::map<std::vector<std::string>, int> words;
    for (std::string_view piece : splitPieces(trainingText)) {
        std::vector<std::string> symbols;
        for (unsigned char byte : piece) symbols.push_back(alphabet[byte]);
        ++words[symbols];
    }
    while (vocabulary.tokens.size() < target) {
        std::map<std::pair<std::string, std::string>, int> pairCounts;
        for (const auto& [symbols, count] : words)
            for (std::size_t i = 0; i + 1 < symbols.size(); ++i)
                pairCounts[{symbols[i], symbols[i + 1]}] += count;
        auto best = pairCounts.end();
        for (auto it = pairCounts.begin(); it != pairCounts.end(); ++it)
            if (best == pairCounts.end() || it->second > best->second) best = it;
        if (best == pairCounts.end() || best->second < 2) break;
        const auto [left, right] = best->first;
        addMerge(left, right);
        std::map<std::vector<std::string>, int> merged;
        for (const auto& [symbols, count] : words) {
            std::vector<std::string> out;
            for (std::size_t i = 0; i < symbols.size(); ++i) {
                if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
                    out.push_back(left + right);
                    ++i;
                } else {
                    out.push_back(symbols[i]);
                }
            }
            merged[out] += count;
        }
        words = std::move(merged);
    }
    // Larger vocabularies than the text supports: extend tokens by common letters.
    constexpr std::string_view letters = "etaoinshrdlucmfwypvbgkjqxz";
    std::size_t base = vocabulary.tokens.size() > byteTokenCount ? byteTokenCount : 'a';
    std::size_t sinceProgress = 0;
    while (vocabulary.tokens.size() < target) {
        const std::size_t before = vocabulary.tokens.size();
        const std::string stem = vocabulary.tokens[base];
        for (char letter : letters) {
            if (vocabulary.tokens.size() >= target) break;
            const std::string& suffix = alphabet[static_cast<unsigned char>(letter)];
            if (!known.contains(stem + suffix)) addMerge(stem, suffix);
        }
        sinceProgress = vocabulary.tokens.size() == before ? sinceProgress + 1 : 0;
        if (sinceProgress > vocabulary.tokens.size())
            throw ModelError("synthetic model: cannot grow the vocabulary");
        base = (base + 1) % vocabulary.tokens.size();
    }
    vocabulary.types.assign(vocabulary.tokens.size(), TokenType::Normal);
    for (const char* special : {endOfText, imStart, imEnd}) {
        vocabulary.tokens.push_back(special);
        vocabulary.types.push_back(TokenType::Control);
    }
    // As the default model: a chat turn starts with <|im_start|> and ends with <|im_end|>.
    vocabulary.bos = static_cast<std::int32_t>(vocabulary.tokens.size() - 2);
    vocabulary.eos = static_cast<std::int32_t>(vocabulary.tokens.size() - 1);
    return vocabulary;
}

// --- Weights ---------------------------------------------------------------------------

struct SyntheticTensor {
    std::string hfName;
    std::string ggufName;
    std::vector<std::uint64_t> rowsCols; // {rows, cols} for matrices, {n} for vectors
    std::vector<float> values;           // row-major, HF row order
    bool matrix() const { return rowsCols.size() == 2; }
};

std::uint32_t tokenizerTokens(const SyntheticModelSpec& spec) {
    return spec.tokenizerTokens ? spec.tokenizerTokens : spec.vocabSize;
}

void checkSpec(const SyntheticModelSpec& spec) {
    if (spec.architecture != "llama" && spec.architecture != "qwen2")
        throw ModelError("synthetic model", "architecture", std::nullopt,
                         "'" + spec.architecture + "' is not llama or qwen2");
    syntheticConfig(spec).validate("synthetic model spec");
    for (std::uint32_t dim : spec.outlierDims)
        if (dim >= spec.hiddenSize)
            throw ModelError("synthetic model", "outlierDims", std::nullopt,
                             "dimension " + std::to_string(dim) + " is beyond the hidden size " +
                                 std::to_string(spec.hiddenSize));
    if (spec.tokenizerTokens > spec.vocabSize)
        throw ModelError("synthetic model", "tokenizerTokens", std::nullopt,
                         std::to_string(spec.tokenizerTokens) + " tokens exceed the " +
                             std::to_string(spec.vocabSize) + " embedding rows");
    if (!std::isfinite(spec.outlierScale) || spec.outlierScale <= 0.0f)
        throw ModelError("synthetic model", "outlierScale", std::nullopt,
                         "must be finite and positive");
    const auto traits = tensorTypeTraits(static_cast<std::uint32_t>(spec.weightType));
    if (!traits)
        throw ModelError("synthetic model", "weightType", std::nullopt, "unknown tensor type");
    // Every matrix row (hidden, attention width or ffn inputs) must be whole blocks.
    for (std::uint64_t cols :
         {std::uint64_t{spec.hiddenSize}, std::uint64_t{spec.heads} * spec.headDim,
          std::uint64_t{spec.ffnSize}})
        if (cols % traits->blockElements != 0)
            throw ModelError("synthetic model", "weightType", std::nullopt,
                             std::string(traits->name) + " needs rows of whole " +
                                 std::to_string(traits->blockElements) +
                                 "-value blocks; a row of " + std::to_string(cols) + " is not");
}

// All weights in HF layout. Scales keep activations of order one: matrices ~ N(0, 1/fan_in);
// embeddings ~ N(0, 1); norm weights near 1. Outlier dimensions are scaled up wherever the
// residual stream is written (embedding columns, attention-output and down-projection
// rows) and scaled down where it is read (norm weights), so every layer's residual carries
// them outlierScale times larger while the normalized inputs stay ordinary.
std::vector<SyntheticTensor> buildWeights(const SyntheticModelSpec& spec) {
    const ModelConfig config = syntheticConfig(spec);
    const std::uint64_t hidden = spec.hiddenSize;
    const std::uint64_t queryWidth = std::uint64_t{spec.heads} * spec.headDim;
    const std::uint64_t kvWidth = std::uint64_t{spec.kvHeads} * spec.headDim;
    const std::uint64_t ffn = spec.ffnSize;
    const std::uint64_t vocab = spec.vocabSize;
    const float scale = spec.outlierScale;
    std::vector<SyntheticTensor> tensors;

    auto make = [&](std::string hfName, std::string ggufName, std::vector<std::uint64_t> shape,
                    double mean, double deviation) -> SyntheticTensor& {
        std::uint64_t count = 1;
        for (auto dim : shape) count *= dim;
        auto values = normalValues(spec.seed, ggufName, count, mean, deviation);
        tensors.push_back(
            {std::move(hfName), std::move(ggufName), std::move(shape), std::move(values)});
        return tensors.back();
    };
    auto scaleColumns = [&](SyntheticTensor& tensor) {
        const std::uint64_t cols = tensor.rowsCols[1];
        for (std::uint64_t row = 0; row < tensor.rowsCols[0]; ++row)
            for (std::uint32_t dim : spec.outlierDims) tensor.values[row * cols + dim] *= scale;
    };
    auto scaleRows = [&](SyntheticTensor& tensor) {
        const std::uint64_t cols = tensor.rowsCols[1];
        for (std::uint32_t dim : spec.outlierDims)
            for (std::uint64_t col = 0; col < cols; ++col) tensor.values[dim * cols + col] *= scale;
    };
    auto shrinkEntries = [&](SyntheticTensor& tensor) {
        for (std::uint32_t dim : spec.outlierDims) tensor.values[dim] /= scale;
    };

    scaleColumns(make("model.embed_tokens.weight", "token_embd.weight", {vocab, hidden}, 0, 1));
    // Final norm weights near 2 / sqrt(hidden): logits of standard deviation ~2.
    const double outputNormMean = 2.0 / std::sqrt(static_cast<double>(hidden));
    shrinkEntries(make("model.norm.weight", "output_norm.weight", {hidden}, outputNormMean,
                       0.1 * outputNormMean));
    if (!spec.tiedEmbeddings)
        scaleColumns(make("lm_head.weight", "output.weight", {vocab, hidden}, 0, 1));

    for (std::uint32_t layer = 0; layer < spec.layers; ++layer) {
        const std::string hf = "model.layers." + std::to_string(layer) + ".";
        const std::string gguf = layerTensorPrefix(layer);
        shrinkEntries(
            make(hf + "input_layernorm.weight", gguf + "attn_norm.weight", {hidden}, 1.0, 0.1));
        const double inputScale = 1.0 / std::sqrt(static_cast<double>(hidden));
        make(hf + "self_attn.q_proj.weight", gguf + "attn_q.weight", {queryWidth, hidden}, 0,
             inputScale);
        make(hf + "self_attn.k_proj.weight", gguf + "attn_k.weight", {kvWidth, hidden}, 0,
             inputScale);
        make(hf + "self_attn.v_proj.weight", gguf + "attn_v.weight", {kvWidth, hidden}, 0,
             inputScale);
        if (config.qkvBias) {
            make(hf + "self_attn.q_proj.bias", gguf + "attn_q.bias", {queryWidth}, 0, 0.1);
            make(hf + "self_attn.k_proj.bias", gguf + "attn_k.bias", {kvWidth}, 0, 0.1);
            make(hf + "self_attn.v_proj.bias", gguf + "attn_v.bias", {kvWidth}, 0, 0.1);
        }
        scaleRows(make(hf + "self_attn.o_proj.weight", gguf + "attn_output.weight",
                       {hidden, queryWidth}, 0, 1.0 / std::sqrt(static_cast<double>(queryWidth))));
        shrinkEntries(make(hf + "post_attention_layernorm.weight", gguf + "ffn_norm.weight",
                           {hidden}, 1.0, 0.1));
        make(hf + "mlp.gate_proj.weight", gguf + "ffn_gate.weight", {ffn, hidden}, 0, inputScale);
        make(hf + "mlp.up_proj.weight", gguf + "ffn_up.weight", {ffn, hidden}, 0, inputScale);
        scaleRows(make(hf + "mlp.down_proj.weight", gguf + "ffn_down.weight", {hidden, ffn}, 0,
                       1.0 / std::sqrt(static_cast<double>(ffn))));
    }
    return tensors;
}

// GGUF llama files rotate adjacent pairs, so conversion reorders each head's rows: row 2i
// of the file is row i of the HF head, row 2i + 1 is row i + d/2.
std::vector<float> permuteForAdjacentRope(const std::vector<float>& values, std::uint32_t heads,
                                          std::uint32_t headDim, std::uint64_t cols) {
    std::vector<float> out(values.size());
    const std::uint32_t half = headDim / 2;
    for (std::uint32_t head = 0; head < heads; ++head)
        for (std::uint32_t i = 0; i < half; ++i)
            for (std::uint32_t side = 0; side < 2; ++side) {
                const std::uint64_t from = std::uint64_t{head} * headDim + i + side * half;
                const std::uint64_t to = std::uint64_t{head} * headDim + 2 * i + side;
                std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(from * cols), cols,
                            out.begin() + static_cast<std::ptrdiff_t>(to * cols));
            }
    return out;
}

std::vector<std::uint8_t> encodeValues(TensorType type, std::span<const float> values) {
    switch (type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
        return encodeFloats(type, values);
    default:
        if (tensorTypeTraits(type).blockElements > 1) return quantizeGgml(type, values);
        break;
    }
    throw ModelError("synthetic model", "weightType", std::nullopt,
                     std::string(tensorTypeName(type)) + " cannot be written");
}

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream stream(path, std::ios::binary | std::ios::trunc);
    if (!stream) throw ModelError(path.string(), "", std::nullopt, "cannot create file");
    stream << text;
    if (!stream) throw ModelError(path.string(), "", std::nullopt, "cannot write file");
}

} // namespace

SyntheticModelSpec qwen25HalfBillionShape(TensorType type) {
    SyntheticModelSpec spec;
    spec.architecture = "qwen2";
    spec.layers = 24;
    spec.hiddenSize = 896;
    spec.heads = 14;
    spec.kvHeads = 2;
    spec.headDim = 64;
    spec.ffnSize = 4864;
    spec.vocabSize = 151936;
    spec.tokenizerTokens = 4096;
    spec.contextLength = 32768;
    spec.ropeTheta = 1000000.0f;
    spec.rmsNormEps = 1e-6f;
    spec.tiedEmbeddings = true;
    spec.qkvBias = true;
    spec.outlierDims = {17, 443};
    spec.weightType = type;
    return spec;
}

ModelConfig syntheticConfig(const SyntheticModelSpec& spec) {
    ModelConfig config;
    config.architecture = spec.architecture;
    config.name = "synthetic-" + spec.architecture;
    config.layers = spec.layers;
    config.hiddenSize = spec.hiddenSize;
    config.heads = spec.heads;
    config.kvHeads = spec.kvHeads;
    config.headDim = spec.headDim;
    config.ffnSize = spec.ffnSize;
    config.vocabSize = spec.vocabSize;
    config.contextLength = spec.contextLength;
    config.ropeTheta = spec.ropeTheta;
    config.rmsNormEps = spec.rmsNormEps;
    config.tiedEmbeddings = spec.tiedEmbeddings;
    config.qkvBias = spec.qkvBias || spec.architecture == "qwen2";
    // As the GGUF file describes it; the safetensors folder is split-half throughout.
    config.ropePairing =
        spec.architecture == "llama" ? RopePairing::Adjacent : RopePairing::SplitHalf;
    return config;
}

void writeSyntheticGguf(const SyntheticModelSpec& spec, const std::filesystem::path& file) {
    checkSpec(spec);
    const ModelConfig config = syntheticConfig(spec);
    SyntheticVocabulary vocabulary = buildVocabulary(tokenizerTokens(spec));
    for (std::size_t id = vocabulary.tokens.size(); id < spec.vocabSize; ++id) {
        vocabulary.tokens.push_back("[PAD" + std::to_string(id) + "]");
        vocabulary.types.push_back(TokenType::Unused);
    }
    const std::string arch = spec.architecture + ".";

    GgufWriter writer;
    writer.set("general.architecture", spec.architecture);
    writer.set("general.name", config.name);
    writer.set(arch + "context_length", std::uint32_t{spec.contextLength});
    writer.set(arch + "embedding_length", std::uint32_t{spec.hiddenSize});
    writer.set(arch + "block_count", std::uint32_t{spec.layers});
    writer.set(arch + "feed_forward_length", std::uint32_t{spec.ffnSize});
    writer.set(arch + "attention.head_count", std::uint32_t{spec.heads});
    writer.set(arch + "attention.head_count_kv", std::uint32_t{spec.kvHeads});
    writer.set(arch + "attention.key_length", std::uint32_t{spec.headDim});
    writer.set(arch + "attention.value_length", std::uint32_t{spec.headDim});
    writer.set(arch + "rope.dimension_count", std::uint32_t{spec.headDim});
    writer.set(arch + "rope.freq_base", spec.ropeTheta);
    writer.set(arch + "attention.layer_norm_rms_epsilon", spec.rmsNormEps);
    writer.set(arch + "vocab_size", std::uint32_t{spec.vocabSize});
    writer.set("tokenizer.ggml.model", std::string("gpt2"));
    writer.set("tokenizer.ggml.pre", std::string("gpt-2"));
    writer.setStringArray("tokenizer.ggml.tokens", vocabulary.tokens);
    std::vector<std::int32_t> types;
    for (TokenType type : vocabulary.types) types.push_back(static_cast<std::int32_t>(type));
    writer.setI32Array("tokenizer.ggml.token_type", types);
    writer.setStringArray("tokenizer.ggml.merges", vocabulary.merges);
    writer.set("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(vocabulary.bos));
    writer.set("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(vocabulary.eos));
    writer.set("tokenizer.ggml.add_bos_token", false);
    writer.set("tokenizer.chat_template", std::string(chatMlTemplate));

    for (SyntheticTensor& tensor : buildWeights(spec)) {
        const bool query =
            tensor.ggufName.ends_with("attn_q.weight") || tensor.ggufName.ends_with("attn_q.bias");
        const bool key =
            tensor.ggufName.ends_with("attn_k.weight") || tensor.ggufName.ends_with("attn_k.bias");
        if (spec.architecture == "llama" && (query || key)) {
            const std::uint64_t cols = tensor.matrix() ? tensor.rowsCols[1] : 1;
            tensor.values = permuteForAdjacentRope(tensor.values, query ? spec.heads : spec.kvHeads,
                                                   spec.headDim, cols);
        }
        // GGUF order: contiguous dimension first.
        std::vector<std::uint64_t> shape(tensor.rowsCols.rbegin(), tensor.rowsCols.rend());
        TensorType type = tensor.matrix() ? spec.weightType : TensorType::F32;
        if (tensor.matrix() && spec.typeMix)
            type = presetTensorType(*spec.typeMix, tensor.ggufName, tensor.rowsCols[1],
                                    {spec.layers, spec.heads, spec.kvHeads, spec.tiedEmbeddings});
        writer.addTensor(tensor.ggufName, type, std::move(shape),
                         encodeValues(type, tensor.values));
    }
    writer.write(file);
}

void writeSyntheticSafetensors(const SyntheticModelSpec& spec,
                               const std::filesystem::path& folder) {
    checkSpec(spec);
    const ModelConfig config = syntheticConfig(spec);
    if (spec.architecture == "llama" && config.qkvBias)
        throw ModelError("synthetic model", "qkvBias", std::nullopt,
                         "an HF llama config cannot express q/k/v-only biases (use qwen2)");
    std::string dtypeName;
    switch (spec.weightType) {
    case TensorType::F32:
        dtypeName = "float32";
        break;
    case TensorType::F16:
        dtypeName = "float16";
        break;
    case TensorType::BF16:
        dtypeName = "bfloat16";
        break;
    default:
        throw ModelError("synthetic model", "weightType", std::nullopt,
                         "safetensors holds F32, F16 or BF16, not " +
                             std::string(tensorTypeName(spec.weightType)));
    }
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error)
        throw ModelError(folder.string(), "", std::nullopt,
                         "cannot create folder: " + error.message());

    SafetensorsWriter weights;
    weights.setMetadata("format", "pt");
    for (const SyntheticTensor& tensor : buildWeights(spec)) {
        const TensorType type = tensor.matrix() ? spec.weightType : TensorType::F32;
        weights.addFloatTensor(tensor.hfName, type, tensor.rowsCols, tensor.values);
    }
    weights.write(folder / "model.safetensors");

    using Json = nlohmann::ordered_json;
    const bool qwen = spec.architecture == "qwen2";
    Json configJson = {
        {"architectures", {qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
        {"model_type", spec.architecture},
        {"hidden_act", "silu"},
        {"hidden_size", spec.hiddenSize},
        {"intermediate_size", spec.ffnSize},
        {"num_hidden_layers", spec.layers},
        {"num_attention_heads", spec.heads},
        {"num_key_value_heads", spec.kvHeads},
        {"head_dim", spec.headDim},
        {"vocab_size", spec.vocabSize},
        {"max_position_embeddings", spec.contextLength},
        {"rope_theta", static_cast<double>(spec.ropeTheta)},
        {"rope_scaling", nullptr},
        {"rms_norm_eps", static_cast<double>(spec.rmsNormEps)},
        {"tie_word_embeddings", spec.tiedEmbeddings},
        {"torch_dtype", dtypeName},
    };
    writeText(folder / "config.json", configJson.dump(2) + "\n");

    const SyntheticVocabulary vocabulary = buildVocabulary(tokenizerTokens(spec));
    Json vocab = Json::object();
    for (std::size_t id = 0; id < vocabulary.tokens.size(); ++id) vocab[vocabulary.tokens[id]] = id;
    Json added = Json::array();
    for (std::size_t id = 0; id < vocabulary.tokens.size(); ++id)
        if (vocabulary.types[id] == TokenType::Control)
            added.push_back({{"id", id},
                             {"content", vocabulary.tokens[id]},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", true}});
    const Json byteLevel = {{"type", "ByteLevel"},
                            {"add_prefix_space", false},
                            {"trim_offsets", true},
                            {"use_regex", true}};
    Json tokenizerJson = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", byteLevel},
        {"post_processor", byteLevel},
        {"decoder", byteLevel},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"vocab", vocab},
          {"merges", vocabulary.merges}}},
    };
    writeText(folder / "tokenizer.json", tokenizerJson.dump(2) + "\n");

    Json tokenizerConfig = {
        {"add_bos_token", false},
        {"add_eos_token", false},
        {"bos_token", vocabulary.tokens[vocabulary.bos]},
        {"eos_token", vocabulary.tokens[vocabulary.eos]},
        {"chat_template", chatMlTemplate},
        {"clean_up_tokenization_spaces", false},
        {"model_max_length", spec.contextLength},
        {"tokenizer_class", "GPT2Tokenizer"},
    };
    writeText(folder / "tokenizer_config.json", tokenizerConfig.dump(2) + "\n");
}

} // namespace inferscope::models
