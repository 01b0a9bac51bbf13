#include "models/formats/HfConfig.hpp"

#include "models/ModelError.hpp"
#include "models/formats/HfArchitectureTraits.hpp"
#include "models/formats/HfJsonFields.hpp"
#include "models/formats/StrictJson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace inferscope::models {

using namespace hfjson;

namespace {

// Largest vocabulary a tokenizer.json may declare (as ModelConfig::validate caps it).
constexpr std::uint64_t maxTokenizerVocab = 1ull << 22;

// --- config.json ----------------------------------------------------------------------

struct ArchitectureName {
    const char* modelType;    // config.json's model_type
    const char* className;    // its architectures entry
    const char* architecture; // ModelConfig::architecture (GGUF's name)
};
constexpr ArchitectureName knownArchitectures[] = {
    {"llama", "LlamaForCausalLM", "llama"},         {"mistral", "MistralForCausalLM", "mistral"},
    {"qwen2", "Qwen2ForCausalLM", "qwen2"},         {"qwen3", "Qwen3ForCausalLM", "qwen3"},
    {"gemma3_text", "Gemma3ForCausalLM", "gemma3"}, {"phi3", "Phi3ForCausalLM", "phi3"},
    {"smollm3", "SmolLM3ForCausalLM", "smollm3"},
};

std::string supportedClasses() {
    std::string list;
    for (const auto& known : knownArchitectures)
        list += (list.empty() ? "" : ", ") + std::string(known.className);
    return list;
}

std::string supportedList() {
    std::string list;
    for (const auto& name : supportedArchitectures()) list += (list.empty() ? "" : ", ") + name;
    return list;
}

std::string architectureOf(const Json& config, const std::string& source) {
    std::optional<std::string> fromType;
    if (const Json* type = findField(config, "model_type")) {
        if (!type->is_string())
            throw ModelError(source, "model_type", std::nullopt, "must be a string");
        const std::string name = type->get<std::string>();
        for (const auto& known : knownArchitectures)
            if (name == known.modelType) fromType = known.architecture;
        if (name == "gemma3")
            throw ModelError(source, "model_type", std::nullopt,
                             "'gemma3' is the multimodal Gemma 3 (text_config inside); only the "
                             "text-only checkpoints (model_type gemma3_text, "
                             "Gemma3ForCausalLM: 270M, 1B) are supported");
        if (!fromType)
            throw ModelError(source, "model_type", std::nullopt,
                             "unsupported model_type '" + name +
                                 "' (supported: " + supportedList() + ")");
    }
    std::optional<std::string> fromClass;
    if (const Json* classes = findField(config, "architectures")) {
        if (!classes->is_array())
            throw ModelError(source, "architectures", std::nullopt, "must be an array of names");
        for (const auto& entry : *classes) {
            const std::string name = entry.is_string() ? entry.get<std::string>() : entry.dump();
            std::optional<std::string> match;
            for (const auto& known : knownArchitectures)
                if (name == known.className) match = known.architecture;
            if (!match)
                throw ModelError(source, "architectures", std::nullopt,
                                 "unsupported architecture '" + name + "' (supported: " +
                                     supportedList() + ": " + supportedClasses() + ")");
            if (fromClass && *fromClass != *match)
                throw ModelError(source, "architectures", std::nullopt,
                                 "names two different architectures");
            fromClass = match;
        }
    }
    if (fromType && fromClass && *fromType != *fromClass)
        throw ModelError(source, "architectures", std::nullopt,
                         "'" + *fromClass + "' contradicts model_type '" + *fromType + "'");
    if (fromType) return *fromType;
    if (fromClass) return *fromClass;
    throw ModelError(
        source, "model_type", std::nullopt,
        "neither model_type nor architectures is given (supported: " + supportedList() + ")");
}

// RoPE scaling from an object holding rope_type (or the older "type") and its parameters:
// config.json's rope_scaling, or the rope_parameters of current transformers.
RopeScaling ropeScalingFrom(const Json& object, const std::string& source,
                            const std::string& prefix) {
    RopeScaling scaling;
    const Json* type = findField(object, "rope_type");
    if (!type) type = findField(object, "type");
    if (!type || !type->is_string())
        throw ModelError(source, prefix + "rope_type", std::nullopt, "missing or not a string");
    const std::string name = type->get<std::string>();
    const auto required = [&](const char* key) {
        if (!findField(object, key))
            throw ModelError(source, prefix + key, std::nullopt,
                             "missing (needed by RoPE type '" + name + "')");
        return requiredNumber(object, source, key);
    };
    if (name == "default") return scaling;
    if (name == "linear") {
        scaling.type = RopeScalingType::Linear;
        scaling.factor = static_cast<float>(required("factor"));
        return scaling;
    }
    if (name == "longrope" || name == "su") {
        // Phi-3.5: factors per RoPE pair for short and long contexts; the short ones run
        // (ModelConfig.hpp). The attention factor and original context are completed by
        // parseHfConfig, which knows max_position_embeddings.
        scaling.type = RopeScalingType::LongRope;
        const Json* factors = findField(object, "short_factor");
        if (!factors || !factors->is_array())
            throw ModelError(source, prefix + "short_factor", std::nullopt,
                             "missing or not an array (needed by RoPE type '" + name + "')");
        for (const auto& value : *factors) {
            if (!value.is_number())
                throw ModelError(source, prefix + "short_factor", std::nullopt,
                                 "must hold numbers, got " + value.dump());
            scaling.frequencyFactors.push_back(static_cast<float>(value.get<double>()));
        }
        if (auto attention = optionalNumber(object, source, "attention_factor"))
            scaling.attentionFactor = static_cast<float>(*attention);
        else
            scaling.attentionFactor = 0.0f; // computed by parseHfConfig
        if (auto original = optionalUnsigned(object, source, "original_max_position_embeddings"))
            scaling.originalContext = *original;
        else
            scaling.originalContext = 0; // the top-level field, read by parseHfConfig
        return scaling;
    }
    if (name == "llama3") {
        scaling.type = RopeScalingType::Llama3;
        scaling.factor = static_cast<float>(required("factor"));
        scaling.lowFreqFactor = static_cast<float>(required("low_freq_factor"));
        scaling.highFreqFactor = static_cast<float>(required("high_freq_factor"));
        scaling.originalContext =
            requiredUnsigned(object, source, "original_max_position_embeddings");
        return scaling;
    }
    throw ModelError(source, prefix + "rope_type", std::nullopt,
                     "RoPE type '" + name +
                         "' is not supported (supported: default, linear, "
                         "llama3, longrope)");
}

RopeScaling ropeScalingOf(const Json& config, const std::string& source) {
    const Json* object = findField(config, "rope_scaling");
    if (!object) return {};
    if (!object->is_object())
        throw ModelError(source, "rope_scaling", std::nullopt, "must be an object or null");
    return ropeScalingFrom(*object, source, "rope_scaling.");
}

// Keys a rope_parameters object may hold for the types above; any other key (yarn's
// beta_fast, per-layer-type sub-objects, mrope sections, ...) means a layout we do not
// understand, and guessing would compute another model.
bool knownRopeParameter(const std::string& key) {
    static const char* const known[] = {"rope_theta",
                                        "rope_type",
                                        "type",
                                        "factor",
                                        "low_freq_factor",
                                        "high_freq_factor",
                                        "original_max_position_embeddings",
                                        "partial_rotary_factor",
                                        "short_factor",
                                        "long_factor",
                                        "attention_factor"};
    return std::find(std::begin(known), std::end(known), key) != std::end(known);
}

// theta and scaling: from rope_parameters (transformers 5: theta moved inside it), else from
// the top-level rope_theta and rope_scaling. Where both layouts are present they must agree.
void readRope(const Json& config, const std::string& source, ModelConfig& result) {
    const auto topTheta = optionalNumber(config, source, "rope_theta");
    RopeScaling topScaling = ropeScalingOf(config, source);
    const auto partial = [&](const Json& object, const std::string& field) {
        if (auto factor = optionalNumber(object, source, "partial_rotary_factor");
            factor && *factor != 1.0)
            throw ModelError(source, field, std::nullopt,
                             "partial RoPE (factor " + std::to_string(*factor) +
                                 ") is not supported");
    };
    partial(config, "partial_rotary_factor");
    const Json* parameters = findField(config, "rope_parameters");
    if (!parameters) {
        result.ropeTheta = static_cast<float>(topTheta.value_or(10000.0));
        result.ropeScaling = topScaling;
        return;
    }
    const std::string prefix = "rope_parameters.";
    if (!parameters->is_object())
        throw ModelError(source, "rope_parameters", std::nullopt, "must be an object or null");
    // One object per attention kind (gemma3 in transformers 5): the full-attention one is
    // the model's RoPE, the sliding one the windowed layers' base (without scaling).
    const Json* full =
        result.architecture == "gemma3" ? findField(*parameters, "full_attention") : nullptr;
    if (full) {
        for (const auto& [key, value] : parameters->items())
            if (key != "full_attention" && key != "sliding_attention")
                throw ModelError(source, prefix + key, std::nullopt,
                                 "beside per-attention-kind RoPE parameters (known: "
                                 "full_attention, sliding_attention)");
        if (!full->is_object())
            throw ModelError(source, prefix + "full_attention", std::nullopt, "must be an object");
        const Json* theta = findField(*full, "rope_theta");
        if (!theta || !theta->is_number())
            throw ModelError(source, prefix + "full_attention.rope_theta", std::nullopt,
                             "missing or not a number");
        result.ropeTheta = static_cast<float>(theta->get<double>());
        result.ropeScaling = ropeScalingFrom(*full, source, prefix + "full_attention.");
        if (const Json* sliding = findField(*parameters, "sliding_attention")) {
            const Json* local = sliding->is_object() ? findField(*sliding, "rope_theta") : nullptr;
            if (!local || !local->is_number())
                throw ModelError(source, prefix + "sliding_attention.rope_theta", std::nullopt,
                                 "missing or not a number");
            result.ropeThetaWindow = static_cast<float>(local->get<double>());
            if (ropeScalingFrom(*sliding, source, prefix + "sliding_attention.").type !=
                RopeScalingType::None)
                throw ModelError(source, prefix + "sliding_attention.rope_type", std::nullopt,
                                 "scaled RoPE in sliding-window layers is not supported");
        }
        return;
    }
    for (const auto& [key, value] : parameters->items())
        if (!knownRopeParameter(key))
            throw ModelError(source, prefix + key, std::nullopt,
                             "a RoPE layout this program does not understand (known keys: "
                             "rope_theta, rope_type, factor, low_freq_factor, high_freq_factor, "
                             "original_max_position_embeddings)");
    partial(*parameters, prefix + "partial_rotary_factor");
    const Json* thetaField = findField(*parameters, "rope_theta");
    if (thetaField && !thetaField->is_number())
        throw ModelError(source, prefix + "rope_theta", std::nullopt,
                         "must be a number, got " + thetaField->dump());
    const double parameterTheta = thetaField ? thetaField->get<double>() : 0.0;
    if (!thetaField && !topTheta)
        throw ModelError(source, prefix + "rope_theta", std::nullopt, "missing required field");
    if (thetaField && topTheta && *topTheta != parameterTheta)
        throw ModelError(source, prefix + "rope_theta", std::nullopt,
                         std::to_string(parameterTheta) + " contradicts the top-level rope_theta " +
                             std::to_string(*topTheta));
    result.ropeTheta = static_cast<float>(thetaField ? parameterTheta : *topTheta);
    result.ropeScaling = ropeScalingFrom(*parameters, source, prefix);
    if (findField(config, "rope_scaling") && (topScaling.type != result.ropeScaling.type ||
                                              topScaling.factor != result.ropeScaling.factor))
        throw ModelError(source, "rope_scaling", std::nullopt, "contradicts rope_parameters");
}

// --- tokenizer.json -------------------------------------------------------------------

std::string stringOf(const Json& value, const std::string& source, const std::string& field) {
    if (!value.is_string()) throw ModelError(source, field, std::nullopt, "must be a string");
    return value.get<std::string>();
}

// Pre-tokenizers (or normalizers, processors) as a flat list: "Sequence" entries unfolded.
void flattenSequence(const Json* node, const char* listKey, std::vector<const Json*>& out,
                     const std::string& source, const std::string& field, int depth = 0) {
    if (!node) return;
    if (!node->is_object())
        throw ModelError(source, field, std::nullopt, "must be an object or null");
    if (depth > 8) throw ModelError(source, field, std::nullopt, "nested too deeply");
    const Json* type = findField(*node, "type");
    if (type && type->is_string() && type->get<std::string>() == "Sequence") {
        const Json* list = findField(*node, listKey);
        if (!list || !list->is_array())
            throw ModelError(source, field + "." + listKey, std::nullopt, "must be an array");
        for (const auto& entry : *list)
            flattenSequence(&entry, listKey, out, source, field, depth + 1);
        return;
    }
    out.push_back(node);
}

std::string typeOf(const Json& node) {
    const Json* type = findField(node, "type");
    return type && type->is_string() ? type->get<std::string>() : std::string();
}

// Whether a Metaspace pre-tokenizer or decoder prepends (and strips) a "▁": its
// prepend_scheme other than "never", else the older add_prefix_space, else yes.
bool metaspacePrepends(const Json& node) {
    const Json* scheme = findField(node, "prepend_scheme");
    if (scheme && scheme->is_string()) return scheme->get<std::string>() != "never";
    const Json* addPrefix = findField(node, "add_prefix_space");
    return !(addPrefix && addPrefix->is_boolean()) || addPrefix->get<bool>();
}

// Our decode is the family's: byte-level maps the bytes back; SentencePiece writes "▁" as a
// space and <0xXX> tokens as their bytes, and drops the space the encoder prepended. A decoder
// (or one of its options) that renders the ids otherwise is refused, naming it; no decoder
// leaves the family's rule.
void checkDecoder(const Json* decoder, const TokenizerData& data, bool byteFallback,
                  const std::string& source) {
    std::vector<const Json*> steps;
    flattenSequence(decoder, "decoders", steps, source, "decoder");
    if (steps.empty()) return;
    auto refuse = [&](std::size_t i, const std::string& why) {
        throw ModelError(source, "decoder[" + std::to_string(i) + "]", std::nullopt,
                         "decoder '" + typeOf(*steps[i]) + "' " + why +
                             " is not supported (our decode would differ)");
    };
    auto stringField = [](const Json& node, const char* key) {
        const Json* value = findField(node, key);
        return value && value->is_string() ? value->get<std::string>() : std::string("\x01");
    };
    auto integerField = [](const Json& node, const char* key) {
        const Json* value = findField(node, key);
        return value && value->is_number_integer() && value->get<std::int64_t>() >= 0
                   ? value->get<std::uint64_t>()
                   : ~0ull;
    };
    bool spacesRestored = false, prefixStripped = false;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const Json& step = *steps[i];
        const std::string type = typeOf(step);
        if (data.kind == TokenizerKind::ByteLevelBpe) {
            if (type != "ByteLevel") refuse(i, "on a byte-level vocabulary");
            continue;
        }
        if (type == "ByteFallback" || type == "Fuse") continue;
        if (type == "Replace") {
            const Json* pattern = findField(step, "pattern");
            const Json* from =
                pattern && pattern->is_object() ? findField(*pattern, "String") : nullptr;
            if (!from || *from != "\u2581" || stringField(step, "content") != " ")
                refuse(i, "other than \"▁\" -> \" \"");
            spacesRestored = true;
        } else if (type == "Strip") {
            if (stringField(step, "content") != " " || integerField(step, "stop") != 0 ||
                integerField(step, "start") > 1)
                refuse(i, "other than one leading space");
            prefixStripped = integerField(step, "start") == 1;
        } else if (type == "Metaspace") {
            if (stringField(step, "replacement") != "\u2581") refuse(i, "with another replacement");
            if (byteFallback) refuse(i, "with byte fallback (it prints <0xXX> tokens as text)");
            spacesRestored = true;
            prefixStripped = metaspacePrepends(step);
        } else {
            refuse(i, "on a SentencePiece-style vocabulary");
        }
    }
    if (data.kind == TokenizerKind::SentencePieceBpe && !spacesRestored)
        throw ModelError(source, "decoder", std::nullopt,
                         "keeps \"▁\" in the text; not supported (our decode would differ)");
    if (data.kind == TokenizerKind::SentencePieceBpe && prefixStripped != data.addSpacePrefix)
        throw ModelError(source, "decoder", std::nullopt,
                         std::string(prefixStripped ? "strips a leading space the encoder never "
                                                      "adds"
                                                    : "keeps the leading space the encoder adds") +
                             "; not supported (our decode would differ)");
}

// A token written in tokenizer_config.json: a string, or an AddedToken object.
std::optional<std::string> configToken(const Json* config, const char* key,
                                       const std::string& source) {
    if (!config) return std::nullopt;
    const Json* value = findField(*config, key);
    if (!value) return std::nullopt;
    if (value->is_string()) return value->get<std::string>();
    if (value->is_object()) {
        const Json* content = findField(*value, "content");
        if (content && content->is_string()) return content->get<std::string>();
    }
    throw ModelError(source, key, std::nullopt, "must be a token string or an object with content");
}

bool isByteToken(const std::string& text) {
    if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return false;
    auto hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
    };
    return hex(text[3]) && hex(text[4]);
}

} // namespace

std::string preTokenizerNameForRegex(std::string_view regex) {
    static const std::pair<std::string_view, std::string_view> known[] = {
        {R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re",
         "gpt-2"},
        {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
         "llama-bpe"},
        {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
         "qwen2"},
        {R"re(\p{N})re", "smollm"},
    };
    for (const auto& [pattern, name] : known)
        if (regex == pattern) return std::string(name);
    return {};
}

ModelConfig parseHfConfig(const nlohmann::json& config, const std::string& source) {
    if (!config.is_object()) throw ModelError(source, "", std::nullopt, "must be a JSON object");
    ModelConfig result;
    result.architecture = architectureOf(config, source);
    result.layers = requiredUnsigned(config, source, "num_hidden_layers");
    result.hiddenSize = requiredUnsigned(config, source, "hidden_size");
    result.heads = requiredUnsigned(config, source, "num_attention_heads");
    if (result.heads == 0)
        throw ModelError(source, "num_attention_heads", std::nullopt, "must not be zero");
    result.kvHeads = optionalUnsigned(config, source, "num_key_value_heads").value_or(result.heads);
    if (result.kvHeads == 0 || result.heads % result.kvHeads != 0)
        throw ModelError(source, "num_key_value_heads", std::nullopt,
                         std::to_string(result.heads) +
                             " attention heads must be a positive multiple of " +
                             std::to_string(result.kvHeads) + " key/value heads");
    if (auto headDim = optionalUnsigned(config, source, "head_dim")) {
        result.headDim = *headDim;
    } else {
        if (result.hiddenSize % result.heads != 0)
            throw ModelError(source, "head_dim", std::nullopt,
                             "absent, and hidden_size " + std::to_string(result.hiddenSize) +
                                 " is not a multiple of " + std::to_string(result.heads) +
                                 " heads");
        result.headDim = result.hiddenSize / result.heads;
    }
    result.ffnSize = requiredUnsigned(config, source, "intermediate_size");
    result.vocabSize = requiredUnsigned(config, source, "vocab_size");
    result.contextLength = requiredUnsigned(config, source, "max_position_embeddings");
    readRope(config, source, result);
    result.rmsNormEps =
        static_cast<float>(optionalNumber(config, source, "rms_norm_eps").value_or(1e-6));
    result.tiedEmbeddings = optionalBool(config, source, "tie_word_embeddings").value_or(false);
    // HF checkpoints keep Q/K rows as trained: RoPE rotates (i, i + d/2) pairs.
    result.ropePairing = RopePairing::SplitHalf;
    result.qkvBias = result.architecture == "qwen2";
    readArchitectureTraits(config, source, result);
    if (optionalBool(config, source, "attention_bias").value_or(false))
        throw ModelError(source, "attention_bias", std::nullopt,
                         "biases on all attention projections are not supported");
    if (optionalBool(config, source, "mlp_bias").value_or(false))
        throw ModelError(source, "mlp_bias", std::nullopt, "MLP biases are not supported");
    if (optionalBool(config, source, "use_sliding_window").value_or(false))
        throw ModelError(source, "use_sliding_window", std::nullopt,
                         "sliding-window attention is not supported");
    if (result.architecture == "mistral") {
        // Mistral attends to a sliding window; within it, attention is exact, so the
        // usable context is the window.
        if (auto window = optionalUnsigned(config, source, "sliding_window"))
            if (*window > 0 && *window < result.contextLength) result.contextLength = *window;
    }
    result.validate(source);
    return result;
}

ModelConfig readHfConfig(const std::filesystem::path& configJson) {
    ModelConfig config = parseHfConfig(readStrictJsonFile(configJson), configJson.string());
    config.name = configJson.parent_path().filename().string();
    return config;
}

TokenizerData parseHfTokenizer(const nlohmann::json& tokenizer,
                               const nlohmann::json* tokenizerConfig, const std::string& source,
                               const std::string& configSource) {
    if (!tokenizer.is_object()) throw ModelError(source, "", std::nullopt, "must be a JSON object");
    if (tokenizerConfig && !tokenizerConfig->is_object())
        throw ModelError(configSource, "", std::nullopt, "must be a JSON object");
    const Json* model = findField(tokenizer, "model");
    if (!model || !model->is_object())
        throw ModelError(source, "model", std::nullopt, "missing or not an object");
    const std::string modelType = typeOf(*model);
    if (!(modelType == "BPE" || (modelType.empty() && findField(*model, "merges"))))
        throw ModelError(source, "model.type", std::nullopt,
                         "tokenizer model '" + modelType + "' is not supported (BPE only)");

    // Vocabulary, then added tokens, by id.
    const Json* vocab = findField(*model, "vocab");
    if (!vocab || !vocab->is_object())
        throw ModelError(source, "model.vocab", std::nullopt, "missing or not an object");
    const Json* addedTokens = findField(tokenizer, "added_tokens");
    if (addedTokens && !addedTokens->is_array())
        throw ModelError(source, "added_tokens", std::nullopt, "must be an array");
    // Ids must run from 0 without gaps, so none can reach the number of entries; checking
    // that first keeps a hostile id from sizing the table.
    const std::uint64_t idLimit = std::min<std::uint64_t>(
        maxTokenizerVocab, vocab->size() + (addedTokens ? addedTokens->size() : 0));
    std::vector<std::optional<std::string>> byId;
    std::unordered_map<std::string, std::int32_t> idOf;
    auto place = [&](const std::string& text, const Json& idValue, const std::string& field) {
        if (!idValue.is_number_unsigned())
            throw ModelError(source, field, std::nullopt,
                             "token id must be a non-negative integer, got " + idValue.dump());
        if (idValue.get<std::uint64_t>() >= idLimit)
            throw ModelError(source, field, std::nullopt,
                             "token id " + idValue.dump() + " is not below " +
                                 std::to_string(idLimit) +
                                 " (ids must run from 0 without gaps, and stay below " +
                                 std::to_string(maxTokenizerVocab) + ")");
        const auto id = static_cast<std::int32_t>(idValue.get<std::uint64_t>());
        if (static_cast<std::size_t>(id) >= byId.size()) byId.resize(id + 1);
        auto& slot = byId[id];
        if (slot && *slot != text)
            throw ModelError(source, field, std::nullopt,
                             "id " + std::to_string(id) + " is given to both '" + *slot +
                                 "' and '" + text + "'");
        auto [it, inserted] = idOf.emplace(text, id);
        if (!inserted && it->second != id)
            throw ModelError(source, field, std::nullopt,
                             "token '" + text + "' has two ids, " + std::to_string(it->second) +
                                 " and " + std::to_string(id));
        slot = text;
        return id;
    };
    for (const auto& [text, id] : vocab->items()) place(text, id, "model.vocab." + text);

    std::vector<std::pair<std::int32_t, bool>> added; // id, special
    if (addedTokens) {
        for (std::size_t i = 0; i < addedTokens->size(); ++i) {
            const Json& entry = (*addedTokens)[i];
            const std::string field = "added_tokens[" + std::to_string(i) + "]";
            if (!entry.is_object())
                throw ModelError(source, field, std::nullopt, "must be an object");
            const Json* content = findField(entry, "content");
            const Json* id = findField(entry, "id");
            if (!content || !id)
                throw ModelError(source, field, std::nullopt, "needs id and content");
            const std::string text = stringOf(*content, source, field + ".content");
            const bool special = optionalBool(entry, source, "special").value_or(false);
            // Flags that change where an added token matches: not applied here, so refused.
            for (const char* flag : {"lstrip", "rstrip", "single_word"})
                if (optionalBool(entry, source, flag).value_or(false))
                    throw ModelError(source, field + "." + flag, std::nullopt,
                                     "added-token flag '" + std::string(flag) +
                                         "' is not supported (it changes the ids)");
            added.emplace_back(place(text, *id, field + ".id"), special);
        }
    }
    if (byId.empty()) throw ModelError(source, "model.vocab", std::nullopt, "is empty");
    for (std::size_t id = 0; id < byId.size(); ++id)
        if (!byId[id])
            throw ModelError(source, "model.vocab", std::nullopt,
                             "token id " + std::to_string(id) +
                                 " is missing; ids must run from 0 without gaps");

    TokenizerData data;
    data.tokens.reserve(byId.size());
    for (auto& text : byId) data.tokens.push_back(std::move(*text));

    // Which family: byte-level (GPT-2) or SentencePiece-style (Metaspace, byte fallback).
    std::vector<const Json*> preTokenizers, normalizers;
    flattenSequence(findField(tokenizer, "pre_tokenizer"), "pretokenizers", preTokenizers, source,
                    "pre_tokenizer");
    flattenSequence(findField(tokenizer, "normalizer"), "normalizers", normalizers, source,
                    "normalizer");
    bool byteLevel = false, metaspace = false, prependSpace = false;
    bool metaspacePrefixRules = false, prefixFirstOnly = false;
    for (std::size_t i = 0; i < preTokenizers.size(); ++i) {
        const Json* node = preTokenizers[i];
        const std::string type = typeOf(*node);
        if (type == "ByteLevel") byteLevel = true;
        if (type == "Metaspace") {
            metaspace = true;
            // Splitting at every "▁" keeps merges inside words; our SentencePiece encoder
            // merges across them (as sentencepiece's own vocabularies never need).
            const std::string field = "pre_tokenizer[" + std::to_string(i) + "]";
            if (optionalBool(*node, source, "split").value_or(false))
                throw ModelError(source, field + ".split", std::nullopt,
                                 "a Metaspace split at every \"▁\" is not supported (it "
                                 "changes the ids)");
            const Json* replacement = findField(*node, "replacement");
            if (replacement && *replacement != "\u2581")
                throw ModelError(source, field + ".replacement", std::nullopt,
                                 "a Metaspace replacement other than \"▁\" is not supported");
            const Json* scheme = findField(*node, "prepend_scheme");
            metaspacePrefixRules = true;
            prependSpace = metaspacePrepends(*node);
            prefixFirstOnly =
                scheme && scheme->is_string() && scheme->get<std::string>() == "first";
        }
    }
    for (std::size_t i = 0; i < normalizers.size(); ++i) {
        const Json* node = normalizers[i];
        const std::string type = typeOf(*node);
        const Json* prepend = findField(*node, "prepend");
        const Json* replaced = findField(*node, "content");
        // What is applied: SentencePiece's "▁" prefix and space replacement (below), and NFC
        // (the tokenizer composes each text between special tokens). Every other normalizer
        // (Lowercase, NFKC, NFD, Strip, ...) would change the ids without our tokenizer doing
        // it: refused, naming it.
        const bool applied = type == "NFC" ||
                             (type == "Prepend" && prepend && *prepend == "\u2581") ||
                             (type == "Replace" && replaced && *replaced == "\u2581");
        if (!applied)
            throw ModelError(source, "normalizer[" + std::to_string(i) + "]", std::nullopt,
                             "normalizer '" + type + "' is not supported (it changes the ids)");
        if (type == "Prepend" && prepend && *prepend == "\u2581") {
            metaspace = true;
            prependSpace = true;
        }
        const Json* content = findField(*node, "content");
        if (type == "Replace" && content && *content == "\u2581") metaspace = true;
        if (type == "NFC") data.normalizeNfc = true;
    }
    const bool byteFallback = optionalBool(*model, source, "byte_fallback").value_or(false);
    // BPE options that change the ids and that our BPE does not implement.
    for (const char* option : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        const Json* value = findField(*model, option);
        if (value && !value->is_null() &&
            !(value->is_string() && value->get<std::string>().empty()))
            throw ModelError(source, std::string("model.") + option, std::nullopt,
                             std::string(option) + " " + value->dump() +
                                 " is not supported (it changes the ids)");
    }
    if (optionalBool(*model, source, "ignore_merges").value_or(false))
        throw ModelError(source, "model.ignore_merges", std::nullopt,
                         "ignore_merges (whole words looked up before merging) is not "
                         "supported (it changes the ids)");
    if (byteLevel && (metaspace || byteFallback))
        throw ModelError(source, "pre_tokenizer", std::nullopt,
                         "mixes byte-level and SentencePiece-style tokenization");
    if (byteLevel) {
        data.kind = TokenizerKind::ByteLevelBpe;
    } else if (metaspace || byteFallback) {
        data.kind = TokenizerKind::SentencePieceBpe;
        for (std::size_t i = 0; i < preTokenizers.size(); ++i)
            if (typeOf(*preTokenizers[i]) != "Metaspace")
                throw ModelError(source, "pre_tokenizer[" + std::to_string(i) + "]", std::nullopt,
                                 "pre-tokenizer '" + typeOf(*preTokenizers[i]) +
                                     "' beside SentencePiece-style tokens is not supported");
        data.addSpacePrefix = prependSpace;
        data.spacePrefixUnlessSpace = metaspacePrefixRules;
        data.spacePrefixAtInputStartOnly = prefixFirstOnly;
        data.decodeStripsFirstPieceOnly = true;
        data.preTokenizer = "default";
    } else {
        throw ModelError(source, "pre_tokenizer", std::nullopt,
                         "neither byte-level nor SentencePiece-style (Metaspace or byte "
                         "fallback): tokenizer family not supported");
    }

    checkDecoder(findField(tokenizer, "decoder"), data, byteFallback, source);

    if (data.kind == TokenizerKind::ByteLevelBpe) {
        // Name the split rule the way tokenizer.ggml.pre does.
        std::string splitName;
        bool individualDigits = false, byteLevelRegex = false;
        for (std::size_t i = 0; i < preTokenizers.size(); ++i) {
            const Json& node = *preTokenizers[i];
            const std::string type = typeOf(node);
            const std::string field = "pre_tokenizer[" + std::to_string(i) + "]";
            if (type == "ByteLevel") {
                byteLevelRegex = optionalBool(node, source, "use_regex").value_or(true);
            } else if (type == "Digits") {
                if (!optionalBool(node, source, "individual_digits").value_or(false))
                    throw ModelError(source, field, std::nullopt,
                                     "Digits without individual_digits is not supported");
                individualDigits = true;
            } else if (type == "Split") {
                const Json* pattern = findField(node, "pattern");
                const Json* regex =
                    pattern && pattern->is_object() ? findField(*pattern, "Regex") : nullptr;
                if (!regex || !regex->is_string())
                    throw ModelError(source, field + ".pattern", std::nullopt,
                                     "only Regex split patterns are supported");
                if (optionalBool(node, source, "invert").value_or(false))
                    throw ModelError(source, field + ".invert", std::nullopt,
                                     "inverted splits are not supported");
                const std::string name = preTokenizerNameForRegex(regex->get<std::string>());
                if (name.empty())
                    throw ModelError(source, field + ".pattern", std::nullopt,
                                     "unrecognised pre-tokenizer regex " + regex->dump());
                if (!splitName.empty())
                    throw ModelError(source, field, std::nullopt,
                                     "more than one Split pre-tokenizer is not supported");
                splitName = name;
            } else {
                throw ModelError(source, field, std::nullopt,
                                 "pre-tokenizer '" + type + "' is not supported");
            }
        }
        if (!splitName.empty() && splitName != "smollm") {
            if (individualDigits)
                throw ModelError(source, "pre_tokenizer", std::nullopt,
                                 "Digits together with a Split regex is not supported");
            data.preTokenizer = splitName;
        } else if (splitName == "smollm" || individualDigits) {
            // Lone digits first, then the GPT-2 rule inside ByteLevel: SmolLM's tokenizer.
            if (!byteLevelRegex)
                throw ModelError(source, "pre_tokenizer", std::nullopt,
                                 "a digit split without the byte-level regex is not supported");
            data.preTokenizer = "smollm";
        } else {
            data.preTokenizer = "gpt-2";
        }
    }

    // Merges: "left right" strings or [left, right] pairs; each side and the result must
    // be tokens (as the tokenizers library requires).
    const Json* merges = findField(*model, "merges");
    if (merges && !merges->is_array())
        throw ModelError(source, "model.merges", std::nullopt, "must be an array");
    std::unordered_map<std::string, std::size_t> rankOfResult;
    if (merges) {
        data.merges.reserve(merges->size());
        for (std::size_t i = 0; i < merges->size(); ++i) {
            const Json& entry = (*merges)[i];
            const std::string field = "model.merges[" + std::to_string(i) + "]";
            std::string left, right;
            if (entry.is_string()) {
                const std::string text = entry.get<std::string>();
                const std::size_t space = text.find(' ');
                if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
                    throw ModelError(source, field, std::nullopt,
                                     "merge \"" + text + "\" must be two tokens and one space");
                left = text.substr(0, space);
                right = text.substr(space + 1);
            } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
                       entry[1].is_string()) {
                left = entry[0].get<std::string>();
                right = entry[1].get<std::string>();
                if (left.find(' ') != std::string::npos || right.find(' ') != std::string::npos)
                    throw ModelError(source, field, std::nullopt,
                                     "merges of tokens containing spaces are not supported");
            } else {
                throw ModelError(source, field, std::nullopt,
                                 "must be \"left right\" or [\"left\", \"right\"]");
            }
            for (const std::string* part : {&left, &right})
                if (left.empty() || right.empty() || !idOf.contains(*part))
                    throw ModelError(source, field, std::nullopt,
                                     "merge \"" + left + " " + right +
                                         "\" references missing token '" + *part + "'");
            const std::string result = left + right;
            if (!idOf.contains(result))
                throw ModelError(source, field, std::nullopt,
                                 "merge \"" + left + " " + right + "\" produces '" + result +
                                     "', which is not in the vocabulary");
            rankOfResult.emplace(result, i);
            data.merges.push_back(left + " " + right);
        }
    }

    // Token types.
    data.tokenTypes.assign(data.tokens.size(), TokenType::Normal);
    for (auto [id, special] : added)
        data.tokenTypes[id] = special ? TokenType::Control : TokenType::UserDefined;
    if (const Json* unk = findField(*model, "unk_token")) {
        const std::string text = stringOf(*unk, source, "model.unk_token");
        auto it = idOf.find(text);
        if (it == idOf.end())
            throw ModelError(source, "model.unk_token", std::nullopt,
                             "'" + text + "' is not in the vocabulary");
        data.unknownId = it->second;
        data.tokenTypes[it->second] = TokenType::Unknown;
    }
    if (data.kind == TokenizerKind::SentencePieceBpe) {
        for (std::size_t id = 0; id < data.tokens.size(); ++id)
            if (data.tokenTypes[id] == TokenType::Normal && isByteToken(data.tokens[id]))
                data.tokenTypes[id] = TokenType::Byte;
        // tokenizer.json has ranks, not SentencePiece scores: a merge's result scores minus
        // its rank, so earlier merges win; tokens no merge produces rank below every merge.
        const float unranked = -static_cast<float>(data.merges.size());
        data.scores.assign(data.tokens.size(), unranked);
        for (std::size_t id = 0; id < data.tokens.size(); ++id) {
            auto it = rankOfResult.find(data.tokens[id]);
            if (it != rankOfResult.end()) data.scores[id] = -static_cast<float>(it->second);
        }
    }

    // Special tokens: tokenizer_config.json first, else the usual added-token names.
    auto idOfToken = [&](const std::string& text, const char* field) {
        auto it = idOf.find(text);
        if (it == idOf.end())
            throw ModelError(configSource, field, std::nullopt,
                             "'" + text + "' is not in the vocabulary");
        return it->second;
    };
    auto addedNamed = [&](std::initializer_list<const char*> names) -> std::optional<std::int32_t> {
        for (const char* name : names)
            for (auto [id, special] : added)
                if (data.tokens[id] == name) return id;
        return std::nullopt;
    };
    const bool configHasBos = tokenizerConfig && tokenizerConfig->contains("bos_token");
    const bool configHasEos = tokenizerConfig && tokenizerConfig->contains("eos_token");
    if (auto bos = configToken(tokenizerConfig, "bos_token", configSource))
        data.bosId = idOfToken(*bos, "bos_token");
    else if (!configHasBos)
        data.bosId = addedNamed({"<s>", "<|endoftext|>"});
    if (auto eos = configToken(tokenizerConfig, "eos_token", configSource))
        data.eosId = idOfToken(*eos, "eos_token");
    else if (!configHasEos)
        data.eosId = addedNamed({"</s>", "<|endoftext|>"});
    if (auto pad = configToken(tokenizerConfig, "pad_token", configSource))
        data.paddingId = idOfToken(*pad, "pad_token");

    // BOS/EOS insertion: tokenizer_config.json says so explicitly, or the post-processor's
    // single-sequence template starts / ends with them.
    std::vector<const Json*> processors;
    flattenSequence(findField(tokenizer, "post_processor"), "processors", processors, source,
                    "post_processor");
    auto templateToken = [](const Json& element) -> std::optional<std::string> {
        if (!element.is_object()) return std::nullopt;
        const Json* special = findField(element, "SpecialToken");
        if (!special || !special->is_object()) return std::nullopt;
        const Json* id = findField(*special, "id");
        if (!id || !id->is_string()) return std::nullopt;
        return id->get<std::string>();
    };
    bool templateAddsBos = false, templateAddsEos = false;
    for (const Json* processor : processors) {
        if (typeOf(*processor) != "TemplateProcessing") continue;
        const Json* single = findField(*processor, "single");
        if (!single || !single->is_array() || single->empty()) continue;
        if (data.bosId && templateToken(single->front()) == data.tokens[*data.bosId])
            templateAddsBos = true;
        if (data.eosId && templateToken(single->back()) == data.tokens[*data.eosId])
            templateAddsEos = true;
    }
    const Json* config = tokenizerConfig;
    data.addBos = (config ? optionalBool(*config, configSource, "add_bos_token") : std::nullopt)
                      .value_or(templateAddsBos);
    data.addEos = (config ? optionalBool(*config, configSource, "add_eos_token") : std::nullopt)
                      .value_or(templateAddsEos);
    if ((data.addBos && !data.bosId) || (data.addEos && !data.eosId))
        throw ModelError(configSource,
                         data.addBos && !data.bosId ? "add_bos_token" : "add_eos_token",
                         std::nullopt, "asks for a special token the tokenizer does not name");

    // The chat template: a string, or a list of named templates (take "default").
    if (const Json* chat = config ? findField(*config, "chat_template") : nullptr) {
        if (chat->is_string()) {
            data.chatTemplate = chat->get<std::string>();
        } else if (chat->is_array()) {
            for (const auto& entry : *chat) {
                const Json* name = entry.is_object() ? findField(entry, "name") : nullptr;
                const Json* text = entry.is_object() ? findField(entry, "template") : nullptr;
                if (!name || !text || !text->is_string())
                    throw ModelError(configSource, "chat_template", std::nullopt,
                                     "list entries need name and template strings");
                if (*name == "default" || data.chatTemplate.empty())
                    data.chatTemplate = text->get<std::string>();
            }
        } else {
            throw ModelError(configSource, "chat_template", std::nullopt,
                             "must be a string or a list of named templates");
        }
    }
    data.source = source;
    return data;
}

TokenizerData readHfTokenizer(const std::filesystem::path& tokenizerJson,
                              const std::filesystem::path& tokenizerConfigJson) {
    const Json tokenizer = readStrictJsonFile(tokenizerJson);
    std::optional<Json> config;
    if (!tokenizerConfigJson.empty() && std::filesystem::exists(tokenizerConfigJson))
        config = readStrictJsonFile(tokenizerConfigJson);
    return parseHfTokenizer(tokenizer, config ? &*config : nullptr, tokenizerJson.string(),
                            tokenizerConfigJson.string());
}

} // namespace inferscope::models
