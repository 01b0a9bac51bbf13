// loadGgufModel: GGUF metadata -> ModelConfig and TokenizerData, tensors -> WeightStore
// views into the mapping, and a check that every tensor the transformer needs is there
// with the shape the configuration implies.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/ModelTensors.hpp"
#include "models/formats/FiniteWeights.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/formats/TensorNames.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace inferscope::models {

namespace {

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

class MetadataReader {
public:
    explicit MetadataReader(const GgufFile& gguf) : gguf_(gguf), file_(gguf.path().string()) {}

    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw ModelError(file_, key, gguf_.metadataOffset(key), message);
    }

    std::uint32_t requiredU32(const std::string& key) const {
        auto value = gguf_.getUInt(key);
        if (!value) fail(key, "required metadata key is missing");
        return toU32(key, *value);
    }
    std::optional<std::uint32_t> optionalU32(const std::string& key) const {
        auto value = gguf_.getUInt(key);
        if (!value) return std::nullopt;
        return toU32(key, *value);
    }
    std::optional<float> optionalF32(const std::string& key) const {
        auto value = gguf_.getFloat(key);
        if (!value) return std::nullopt;
        if (!std::isfinite(*value) || std::fabs(*value) > std::numeric_limits<float>::max())
            fail(key, "value " + number(*value) + " is not a finite f32");
        return static_cast<float>(*value);
    }
    float requiredF32(const std::string& key) const {
        auto value = optionalF32(key);
        if (!value) fail(key, "required metadata key is missing");
        return *value;
    }
    // A token id: must name a token of the vocabulary.
    std::optional<std::int32_t> tokenId(const std::string& key, std::size_t vocabSize) const {
        auto value = gguf_.getUInt(key);
        if (!value) return std::nullopt;
        if (*value >= vocabSize)
            fail(key, "token id " + std::to_string(*value) + " is not below the vocabulary size " +
                          std::to_string(vocabSize));
        return static_cast<std::int32_t>(*value);
    }

private:
    std::uint32_t toU32(const std::string& key, std::uint64_t value) const {
        if (value > std::numeric_limits<std::uint32_t>::max())
            fail(key, "value " + std::to_string(value) + " does not fit in 32 bits");
        return static_cast<std::uint32_t>(value);
    }

    const GgufFile& gguf_;
    std::string file_;
};

std::string joinedArchitectures() {
    std::string list;
    for (const auto& name : supportedArchitectures()) list += (list.empty() ? "" : ", ") + name;
    return list;
}

std::string describeShape(const std::vector<std::uint64_t>& shape) {
    std::string text = "{";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "}";
}

TokenizerData readTokenizer(const GgufFile& gguf, const MetadataReader& meta) {
    TokenizerData tokenizer;
    const std::string modelKey = "tokenizer.ggml.model";
    const auto model = gguf.getString(modelKey);
    if (!model) meta.fail(modelKey, "required metadata key is missing");
    if (*model == "gpt2")
        tokenizer.kind = TokenizerKind::ByteLevelBpe;
    else if (*model == "llama")
        tokenizer.kind = TokenizerKind::SentencePieceBpe;
    else
        meta.fail(modelKey, "unsupported tokenizer model '" + *model +
                                "' (supported: gpt2 = byte-level BPE, llama = SentencePiece BPE)");
    const bool sentencePiece = tokenizer.kind == TokenizerKind::SentencePieceBpe;

    tokenizer.preTokenizer = gguf.getString("tokenizer.ggml.pre").value_or("default");
    const std::string tokensKey = "tokenizer.ggml.tokens";
    auto tokens = gguf.getStringArray(tokensKey);
    if (!tokens) meta.fail(tokensKey, "required metadata key is missing");
    if (tokens->empty()) meta.fail(tokensKey, "the vocabulary is empty");
    if (tokens->size() > std::numeric_limits<std::int32_t>::max())
        meta.fail(tokensKey, "vocabulary too large");
    tokenizer.tokens = std::move(*tokens);
    const std::size_t vocab = tokenizer.tokens.size();

    const std::string scoresKey = "tokenizer.ggml.scores";
    if (auto scores = gguf.getNumberArray(scoresKey)) {
        if (scores->size() != vocab)
            meta.fail(scoresKey, std::to_string(scores->size()) + " scores for " +
                                     std::to_string(vocab) + " tokens");
        tokenizer.scores.reserve(vocab);
        for (double score : *scores) tokenizer.scores.push_back(static_cast<float>(score));
    }
    const std::string typesKey = "tokenizer.ggml.token_type";
    if (auto types = gguf.getNumberArray(typesKey)) {
        if (types->size() != vocab)
            meta.fail(typesKey, std::to_string(types->size()) + " token types for " +
                                    std::to_string(vocab) + " tokens");
        tokenizer.tokenTypes.reserve(vocab);
        for (std::size_t i = 0; i < types->size(); ++i) {
            const double type = (*types)[i];
            if (!(type >= 1.0 && type <= 6.0) || type != std::floor(type))
                meta.fail(typesKey, "token " + std::to_string(i) + " has token type " +
                                        number(type) + ", not 1..6");
            tokenizer.tokenTypes.push_back(static_cast<TokenType>(static_cast<int>(type)));
        }
    }
    if (auto merges = gguf.getStringArray("tokenizer.ggml.merges"))
        tokenizer.merges = std::move(*merges);
    else if (!sentencePiece)
        // Without merges byte-level BPE splits every word into bytes: ids no model was
        // trained on. llama.cpp refuses such a file too.
        meta.fail("tokenizer.ggml.merges",
                  "required for a byte-level BPE (gpt2) tokenizer, and missing");

    tokenizer.bosId = meta.tokenId("tokenizer.ggml.bos_token_id", vocab);
    tokenizer.eosId = meta.tokenId("tokenizer.ggml.eos_token_id", vocab);
    tokenizer.unknownId = meta.tokenId("tokenizer.ggml.unknown_token_id", vocab);
    tokenizer.paddingId = meta.tokenId("tokenizer.ggml.padding_token_id", vocab);
    // Defaults as llama.cpp applies them when the keys are absent.
    tokenizer.addBos = gguf.getBool("tokenizer.ggml.add_bos_token").value_or(sentencePiece);
    tokenizer.addEos = gguf.getBool("tokenizer.ggml.add_eos_token").value_or(false);
    tokenizer.addSpacePrefix =
        gguf.getBool("tokenizer.ggml.add_space_prefix").value_or(sentencePiece);
    tokenizer.chatTemplate = gguf.getString("tokenizer.chat_template").value_or("");
    tokenizer.source = gguf.path().string();
    return tokenizer;
}

// What sets the newer architectures apart, as llama.cpp's converter writes it.
void readArchitectureTraits(const GgufFile& gguf, const MetadataReader& meta,
                            const std::string& architecture, ModelConfig& config) {
    const std::string prefix = architecture + ".";
    // llama.cpp rotates adjacent pairs ("norm" RoPE) for llama, mistral and smollm3, whose
    // converter permutes the Q/K rows for it; the others are "neox" (split-half), unpermuted.
    const bool adjacent =
        architecture == "llama" || architecture == "mistral" || architecture == "smollm3";
    config.ropePairing = adjacent ? RopePairing::Adjacent : RopePairing::SplitHalf;
    auto tensorExists = [&](const std::string& name) {
        return std::any_of(gguf.tensorInfos().begin(), gguf.tensorInfos().end(),
                           [&](const auto& info) { return info.name == name; });
    };
    if (architecture == "qwen3") config.qkNorm = true;
    if (architecture == "smollm3") {
        // llama.cpp's smollm3 skips RoPE in every fourth layer; the file does not say so.
        for (std::uint32_t layer = 3; layer < config.layers; layer += 4)
            config.noRopeLayers.push_back(layer);
    }
    if (architecture == "gemma3") {
        config.qkNorm = true;
        config.postNorms = true;
        config.activation = FfnActivation::GeluTanh;
        config.embeddingScale = std::sqrt(static_cast<float>(config.hiddenSize));
        // The converter stores 1 + w for every norm; the file holds no query_pre_attn_scalar,
        // and llama.cpp scales by 1/sqrt(head dim) except for the 62-layer (27B) model.
        config.normWeightOffset = 0.0f;
        if (config.layers == 62 && config.heads != 0)
            config.attentionScale =
                1.0f / std::sqrt(static_cast<float>(config.hiddenSize / config.heads));
        const std::string softcapKey = prefix + "final_logit_softcapping";
        if (auto softcap = meta.optionalF32(softcapKey); softcap && *softcap != 0.0f)
            meta.fail(softcapKey, "final logit soft-capping (" + number(*softcap) +
                                      ") is not supported (Gemma 2 has it, Gemma 3 does not)");
        const std::string windowKey = prefix + "attention.sliding_window";
        if (auto window = meta.optionalU32(windowKey); window && *window > 0) {
            config.slidingWindow = *window;
            config.ropeThetaWindow =
                meta.optionalF32(prefix + "rope.freq_base_swa").value_or(10000.0f);
            const std::string patternKey = prefix + "attention.sliding_window_pattern";
            config.layerSpans.assign(config.layers, AttentionSpan::Global);
            const GgufValue* pattern = gguf.find(patternKey);
            if (pattern && std::holds_alternative<std::shared_ptr<GgufArray>>(*pattern)) {
                const auto flags = gguf.getNumberArray(patternKey);
                if (flags->size() != config.layers)
                    meta.fail(patternKey, std::to_string(flags->size()) + " entries for " +
                                              std::to_string(config.layers) + " layers");
                for (std::uint32_t layer = 0; layer < config.layers; ++layer)
                    if ((*flags)[layer] != 0.0) config.layerSpans[layer] = AttentionSpan::Window;
            } else {
                // Every n-th layer global, the n - 1 before it windowed (llama.cpp's default
                // n = 6: five local layers, then a global one).
                const std::uint32_t period = meta.optionalU32(patternKey).value_or(6);
                for (std::uint32_t layer = 0; layer < config.layers; ++layer)
                    if (period == 0 || layer % period < period - 1)
                        config.layerSpans[layer] = AttentionSpan::Window;
            }
        }
    }
    if (architecture == "phi3" && tensorExists("rope_factors_short.weight")) {
        // LongRope (Phi-3.5): the short factors, up to the original context.
        const std::string originalKey = prefix + "rope.scaling.original_context_length";
        auto original = meta.optionalU32(originalKey);
        if (!original) meta.fail(originalKey, "LongRope factors without the original context");
        config.ropeScaling.type = RopeScalingType::LongRope;
        config.ropeScaling.originalContext = *original;
        config.ropeScaling.attentionFactor =
            meta.optionalF32(prefix + "rope.scaling.attn_factor").value_or(1.0f);
        config.contextLength = std::min(config.contextLength, *original);
    }
}

ModelConfig readConfig(const GgufFile& gguf, const MetadataReader& meta,
                       const std::string& architecture, std::uint32_t vocabSize) {
    const std::string prefix = architecture + ".";
    ModelConfig config;
    config.architecture = architecture;
    config.name = gguf.getString("general.name").value_or(gguf.path().stem().string());
    config.layers = meta.requiredU32(prefix + "block_count");
    config.hiddenSize = meta.requiredU32(prefix + "embedding_length");
    config.heads = meta.requiredU32(prefix + "attention.head_count");
    config.kvHeads = meta.optionalU32(prefix + "attention.head_count_kv").value_or(config.heads);
    config.ffnSize = meta.requiredU32(prefix + "feed_forward_length");
    config.contextLength = meta.requiredU32(prefix + "context_length");
    config.ropeTheta = meta.optionalF32(prefix + "rope.freq_base").value_or(10000.0f);
    config.rmsNormEps = meta.requiredF32(prefix + "attention.layer_norm_rms_epsilon");
    config.vocabSize = vocabSize;
    // Optional, and redundant with the token list; a file where the two disagree was
    // written wrongly, and which of them the embedding rows follow is anyone's guess.
    const std::string vocabKey = prefix + "vocab_size";
    if (auto declared = meta.optionalU32(vocabKey); declared && *declared != vocabSize)
        meta.fail(vocabKey, "says " + std::to_string(*declared) +
                                " tokens but "
                                "tokenizer.ggml.tokens lists " +
                                std::to_string(vocabSize));

    const std::string keyLengthKey = prefix + "attention.key_length";
    if (auto keyLength = meta.optionalU32(keyLengthKey)) {
        config.headDim = *keyLength;
    } else if (config.heads != 0) {
        if (config.hiddenSize % config.heads != 0)
            meta.fail(prefix + "attention.head_count",
                      "hidden size " + std::to_string(config.hiddenSize) + " is not divisible by " +
                          std::to_string(config.heads) + " heads and there is no " + keyLengthKey);
        config.headDim = config.hiddenSize / config.heads;
    }
    const std::string valueLengthKey = prefix + "attention.value_length";
    if (auto valueLength = meta.optionalU32(valueLengthKey);
        valueLength && *valueLength != config.headDim)
        meta.fail(valueLengthKey, "value head size " + std::to_string(*valueLength) +
                                      " differs from key head size " +
                                      std::to_string(config.headDim) + " (not supported)");
    const std::string ropeDimsKey = prefix + "rope.dimension_count";
    if (auto ropeDims = meta.optionalU32(ropeDimsKey); ropeDims && *ropeDims != config.headDim)
        meta.fail(ropeDimsKey, "partial RoPE (" + std::to_string(*ropeDims) + " of " +
                                   std::to_string(config.headDim) +
                                   " dimensions) is not supported");

    // RoPE scaling: linear is announced by type; llama3 either by type or by the per
    // dimension frequency factors the converters store as rope_freqs.weight.
    const std::string scalingTypeKey = prefix + "rope.scaling.type";
    const std::string scalingType = gguf.getString(scalingTypeKey).value_or("none");
    const bool hasRopeFreqs =
        std::any_of(gguf.tensorInfos().begin(), gguf.tensorInfos().end(),
                    [](const auto& info) { return info.name == "rope_freqs.weight"; });
    if (scalingType == "linear") {
        if (hasRopeFreqs)
            meta.fail(scalingTypeKey, "linear RoPE scaling together with rope_freqs.weight");
        config.ropeScaling.type = RopeScalingType::Linear;
        auto factor = meta.optionalF32(prefix + "rope.scaling.factor");
        if (!factor)
            meta.fail(prefix + "rope.scaling.factor", "linear RoPE scaling needs a factor");
        config.ropeScaling.factor = *factor;
    } else if (scalingType == "llama3" || (scalingType == "none" && hasRopeFreqs)) {
        config.ropeScaling.type = RopeScalingType::Llama3;
        // Meta's published defaults; files that carry the values override them.
        config.ropeScaling.factor = meta.optionalF32(prefix + "rope.scaling.factor").value_or(8.0f);
        config.ropeScaling.lowFreqFactor =
            meta.optionalF32(prefix + "rope.scaling.low_freq_factor").value_or(1.0f);
        config.ropeScaling.highFreqFactor =
            meta.optionalF32(prefix + "rope.scaling.high_freq_factor").value_or(4.0f);
    } else if (scalingType == "longrope" && architecture == "phi3") {
        // Read with the rope_factors_short.weight tensor (readArchitectureTraits).
    } else if (scalingType != "none") {
        meta.fail(scalingTypeKey, "unsupported RoPE scaling type '" + scalingType +
                                      "' (supported: none, linear, llama3; longrope for phi3)");
    }
    if (auto original = meta.optionalU32(prefix + "rope.scaling.original_context_length"))
        config.ropeScaling.originalContext = *original;

    readArchitectureTraits(gguf, meta, architecture, config);
    return config;
}

void requireTensor(const WeightStore& store, const std::string& file, const std::string& name,
                   const std::vector<std::uint64_t>& shape, const std::string& why = "") {
    const StoredTensor* tensor = store.find(name);
    if (!tensor)
        throw ModelError(file, name, std::nullopt,
                         "required tensor is missing (expected shape " + describeShape(shape) +
                             ")");
    if (tensor->shape != shape)
        throw ModelError(file, name, tensor->fileOffset,
                         "tensor has shape " + describeShape(tensor->shape) + ", expected " +
                             describeShape(shape) + why);
}

void checkTensors(const WeightStore& store, const ModelConfig& config, const std::string& file) {
    const std::string perToken = " (one row per token of the " + std::to_string(config.vocabSize) +
                                 " in tokenizer.ggml.tokens)";
    for (const auto& [name, shape] : expectedTensorShapes(config, !config.tiedEmbeddings))
        requireTensor(store, file, name, shape,
                      name == "token_embd.weight" || name == "output.weight" ? perToken : "");
    if (config.ropeScaling.type == RopeScalingType::Llama3 && store.contains("rope_freqs.weight"))
        requireTensor(store, file, "rope_freqs.weight", {config.headDim / 2});
}

// phi3 files keep Q|K|V in one matrix (attn_qkv) and gate|up in ffn_up (2 x ffn rows, gate
// first); every layer is split into the canonical views before the tensors are checked.
void splitPhi3Tensors(WeightStore& store, const ModelConfig& config, const std::string& file) {
    const std::uint64_t qWidth = std::uint64_t{config.heads} * config.headDim;
    const std::uint64_t kvWidth = std::uint64_t{config.kvHeads} * config.headDim;
    for (std::uint32_t layer = 0; layer < config.layers; ++layer) {
        const auto name = [&](const char* tensor) { return layerTensorName(layer, tensor); };
        if (store.contains(name("attn_qkv.weight")))
            splitFusedMatrix(store, name("attn_qkv.weight"),
                             {{name("attn_q.weight"), qWidth},
                              {name("attn_k.weight"), kvWidth},
                              {name("attn_v.weight"), kvWidth}},
                             config.hiddenSize, file);
        if (!store.contains(name("ffn_gate.weight")) && store.contains(name("ffn_up.weight"))) {
            // The fused matrix goes by the up projection's name: take it out under another.
            StoredTensor fused = store.at(name("ffn_up.weight"));
            store.remove(fused.name);
            fused.name = name("ffn_gate_up.weight");
            store.add(fused);
            splitFusedMatrix(store, fused.name,
                             {{name("ffn_gate.weight"), config.ffnSize},
                              {name("ffn_up.weight"), config.ffnSize}},
                             config.hiddenSize, file);
        }
    }
}

} // namespace

LoadedModel loadGgufModel(const std::filesystem::path& file) {
    const GgufFile gguf = GgufFile::open(file);
    const MetadataReader meta(gguf);
    const std::string fileName = file.string();

    const std::string architectureKey = "general.architecture";
    const auto architecture = gguf.getString(architectureKey);
    if (!architecture) meta.fail(architectureKey, "required metadata key is missing");
    const auto& supported = supportedArchitectures();
    if (std::find(supported.begin(), supported.end(), *architecture) == supported.end())
        meta.fail(architectureKey, "unsupported architecture '" + *architecture +
                                       "' (supported: " + joinedArchitectures() + ")");

    LoadedModel model;
    model.path = file;
    model.format = ModelFormat::Gguf;
    model.fileBytes = gguf.mapping()->size();
    model.tokenizer = readTokenizer(gguf, meta);
    model.config = readConfig(gguf, meta, *architecture,
                              static_cast<std::uint32_t>(model.tokenizer.tokens.size()));

    model.weights.addMapping(gguf.mapping());
    for (const GgufTensorInfo& info : gguf.tensorInfos()) {
        StoredTensor tensor;
        tensor.name = info.name;
        tensor.type = info.type;
        tensor.shape = info.shape;
        tensor.data = gguf.tensorData(info);
        tensor.fileOffset = gguf.dataOffset() + info.offset;
        model.weights.add(std::move(tensor));
    }
    model.config.tiedEmbeddings = !model.weights.contains("output.weight");
    if (model.config.architecture == "phi3") {
        splitPhi3Tensors(model.weights, model.config, fileName);
        if (model.config.ropeScaling.type == RopeScalingType::LongRope) {
            const std::string factors = "rope_factors_short.weight";
            requireTensor(model.weights, fileName, factors, {model.config.headDim / 2});
            model.config.ropeScaling.frequencyFactors = model.weights.dequantized(factors);
        }
    }
    model.config.qkvBias = model.weights.contains("blk.0.attn_q.bias");
    // Qwen2 always has q/k/v biases: a qwen2 file without them lost tensors on the way, and
    // running it without would silently compute another model.
    if (model.config.architecture == "qwen2" && !model.config.qkvBias)
        throw ModelError(fileName, "blk.0.attn_q.bias", std::nullopt,
                         "required tensor is missing: qwen2 models have q/k/v biases");
    model.config.validate(fileName);
    checkTensors(model.weights, model.config, fileName);
    requireFiniteWeights(model.weights, fileName);
    // Built once here only to be checked, so that every user of a loaded model (info, the
    // window) refuses the tokenizers that generating would refuse.
    (void)Tokenizer(model.tokenizer);
    return model;
}

} // namespace inferscope::models
