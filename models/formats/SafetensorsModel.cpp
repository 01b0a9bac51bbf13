// loadSafetensorsModel: an HF folder (config.json, tokenizer.json, tokenizer_config.json,
// model.safetensors or an index and its shards) as a LoadedModel with canonical GGUF
// tensor names and GGUF shape order.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/ModelTensors.hpp"
#include "models/formats/FiniteWeights.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/formats/SafetensorsFile.hpp"
#include "models/formats/TensorNames.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

namespace inferscope::models {

namespace {

// HF names inside one decoder layer -> canonical names (after "blk.N."), for every
// architecture but where gemmaLayerNames or fusedLayerNames say otherwise.
constexpr std::pair<std::string_view, std::string_view> layerNames[] = {
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"input_layernorm.weight", "attn_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
};
// Gemma's post_attention_layernorm follows the attention (its FFN has a norm before and
// after): checked before layerNames.
constexpr std::pair<std::string_view, std::string_view> gemmaLayerNames[] = {
    {"post_attention_layernorm.weight", "post_attention_norm.weight"},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
};
// phi3's fused matrices, split into the canonical ones after loading.
constexpr std::pair<std::string_view, std::string_view> fusedLayerNames[] = {
    {"self_attn.qkv_proj.weight", "attn_qkv.weight"},
    {"mlp.gate_up_proj.weight", "ffn_gate_up.weight"},
};

struct CanonicalName {
    std::string name;
    bool ignored = false; // a buffer some exports carry, not a weight (rotary inv_freq)
};

// nullopt for a name this loader does not know.
std::optional<CanonicalName> canonicalName(const std::string& hfName, const ModelConfig& config,
                                           const std::string& file, std::uint64_t offset) {
    const std::uint32_t layers = config.layers;
    if (hfName == "model.embed_tokens.weight") return CanonicalName{"token_embd.weight"};
    if (hfName == "model.norm.weight") return CanonicalName{"output_norm.weight"};
    if (hfName == "lm_head.weight") return CanonicalName{"output.weight"};
    constexpr std::string_view prefix = "model.layers.";
    if (!hfName.starts_with(prefix)) return std::nullopt;
    const std::string_view rest = std::string_view(hfName).substr(prefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    const std::string_view digits = rest.substr(0, dot);
    if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
    std::uint32_t layer = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), layer);
    if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    const std::string_view leaf = rest.substr(dot + 1);
    if (leaf == "self_attn.rotary_emb.inv_freq") return CanonicalName{"", true};
    const auto named = [&](std::string_view canonical) {
        if (layer >= layers)
            throw ModelError(file, hfName, offset,
                             "layer " + std::to_string(layer) + " but config.json has " +
                                 std::to_string(layers) + " layers");
        return CanonicalName{layerTensorName(layer, canonical)};
    };
    if (config.architecture == "gemma3")
        for (const auto& [hf, canonical] : gemmaLayerNames)
            if (leaf == hf) return named(canonical);
    if (config.architecture == "phi3")
        for (const auto& [hf, canonical] : fusedLayerNames)
            if (leaf == hf) return named(canonical);
    for (const auto& [hf, canonical] : layerNames)
        if (leaf == hf) return named(canonical);
    return std::nullopt;
}

std::string shapeText(const std::vector<std::uint64_t>& shape) {
    std::string text = "{";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "}";
}

// Expected GGUF-order shapes of every tensor the checkpoint holds: the configuration's,
// with phi3's fused Q|K|V and gate|up in place of the matrices split from them.
std::map<std::string, std::vector<std::uint64_t>> expectedShapes(const ModelConfig& config,
                                                                 bool withOutput) {
    auto shapes = expectedTensorShapes(config, withOutput);
    if (config.architecture != "phi3") return shapes;
    const std::uint64_t hidden = config.hiddenSize;
    const std::uint64_t qkvRows = std::uint64_t{config.heads + 2 * config.kvHeads} * config.headDim;
    for (std::uint32_t layer = 0; layer < config.layers; ++layer) {
        for (const char* split : {"attn_q.weight", "attn_k.weight", "attn_v.weight",
                                  "ffn_gate.weight", "ffn_up.weight"})
            shapes.erase(layerTensorName(layer, split));
        shapes[layerTensorName(layer, "attn_qkv.weight")] = {hidden, qkvRows};
        shapes[layerTensorName(layer, "ffn_gate_up.weight")] = {hidden, 2ull * config.ffnSize};
    }
    return shapes;
}

std::string modelName(const std::filesystem::path& folder) {
    std::filesystem::path normal = folder.lexically_normal();
    if (normal.filename().empty()) normal = normal.parent_path();
    const std::string name = normal.filename().string();
    return name.empty() || name == "." ? std::filesystem::absolute(normal).filename().string()
                                       : name;
}

std::uint64_t sizeIfExists(const std::filesystem::path& path) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    return error ? 0 : size;
}

} // namespace

LoadedModel loadSafetensorsModel(const std::filesystem::path& folder) {
    if (!std::filesystem::is_directory(folder))
        throw ModelError(folder.string(), "", std::nullopt, "is not a folder");
    const auto configPath = folder / "config.json";
    const auto tokenizerPath = folder / "tokenizer.json";
    const auto tokenizerConfigPath = folder / "tokenizer_config.json";
    for (const auto& required : {configPath, tokenizerPath})
        if (!std::filesystem::exists(required))
            throw ModelError(required.string(), "", std::nullopt,
                             "missing: a safetensors model folder needs config.json, "
                             "tokenizer.json and model.safetensors (or an index and shards)");

    LoadedModel model;
    model.path = folder;
    model.format = ModelFormat::Safetensors;
    model.config = readHfConfig(configPath);
    model.config.name = modelName(folder);
    model.tokenizer = readHfTokenizer(tokenizerPath, tokenizerConfigPath);

    auto checkpoint =
        std::make_shared<const SafetensorsCheckpoint>(SafetensorsCheckpoint::openFolder(folder));
    model.weights.setOwner(checkpoint);
    for (const auto& file : checkpoint->files()) model.weights.addMapping(file->mapping());
    model.fileBytes = checkpoint->totalBytes() + sizeIfExists(configPath) +
                      sizeIfExists(tokenizerPath) + sizeIfExists(tokenizerConfigPath);

    // Tied embeddings when the config says so or the checkpoint has no separate head
    // (then a stored lm_head is a copy and canonical stores leave output.weight out).
    const bool hasHead = checkpoint->find("lm_head.weight") != nullptr;
    model.config.tiedEmbeddings = model.config.tiedEmbeddings || !hasHead;
    auto shapes = expectedShapes(model.config, hasHead);

    for (const auto& [hfName, entry] : checkpoint->tensors()) {
        const std::string file = entry.file->path().string();
        const SafetensorsTensor& tensor = *entry.tensor;
        const auto canonical = canonicalName(hfName, model.config, file, tensor.fileOffset);
        if (!canonical)
            throw ModelError(file, hfName, tensor.fileOffset,
                             "unexpected tensor for a " + model.config.architecture +
                                 " model (unsupported architecture variant?)");
        if (canonical->ignored) continue;
        // HF stores [out, in] (outermost first); GGUF order lists the contiguous dim first.
        std::vector<std::uint64_t> shape(tensor.shape.rbegin(), tensor.shape.rend());
        auto expected = shapes.find(canonical->name);
        if (expected == shapes.end())
            throw ModelError(file, hfName, tensor.fileOffset,
                             "not expected by config.json for " + model.config.architecture +
                                 " (qkv biases are qwen2-only)");
        if (shape != expected->second)
            throw ModelError(file, hfName, tensor.fileOffset,
                             "shape " + shapeText(shape) + " (GGUF order) does not match " +
                                 shapeText(expected->second) + " from config.json");
        shapes.erase(expected);
        if (canonical->name == "output.weight" && model.config.tiedEmbeddings) continue;
        StoredTensor stored;
        stored.name = canonical->name;
        stored.type = tensor.type;
        stored.shape = std::move(shape);
        stored.data = checkpoint->tensorData(entry);
        stored.fileOffset = tensor.fileOffset;
        if (const auto bad = findNonFinite(stored))
            throw ModelError(file, hfName, tensor.fileOffset + bad->byteOffset,
                             bad->what + ": a model with non-finite weights computes NaN "
                                         "logits and generates nonsense");
        model.weights.add(std::move(stored));
    }
    if (!shapes.empty())
        throw ModelError(folder.string(), shapes.begin()->first, std::nullopt,
                         "tensor missing from the checkpoint (" + std::to_string(shapes.size()) +
                             " missing in all)");
    if (model.config.architecture == "phi3") {
        // Phi3's fused rows: Q|K|V, and gate then up (transformers' chunk(2) order).
        const ModelConfig& c = model.config;
        const std::uint64_t qWidth = std::uint64_t{c.heads} * c.headDim;
        const std::uint64_t kvWidth = std::uint64_t{c.kvHeads} * c.headDim;
        for (std::uint32_t layer = 0; layer < c.layers; ++layer) {
            const auto name = [&](const char* tensor) { return layerTensorName(layer, tensor); };
            splitFusedMatrix(model.weights, name("attn_qkv.weight"),
                             {{name("attn_q.weight"), qWidth},
                              {name("attn_k.weight"), kvWidth},
                              {name("attn_v.weight"), kvWidth}},
                             c.hiddenSize, folder.string());
            splitFusedMatrix(
                model.weights, name("ffn_gate_up.weight"),
                {{name("ffn_gate.weight"), c.ffnSize}, {name("ffn_up.weight"), c.ffnSize}},
                c.hiddenSize, folder.string());
        }
    }

    // The embedding may have more rows than the tokenizer has tokens (padding to a round
    // size); name the extra ids as GGUF conversion does, so ids and rows correspond.
    auto& tokenizer = model.tokenizer;
    if (tokenizer.tokens.size() > model.config.vocabSize)
        throw ModelError(tokenizerPath.string(), "model.vocab", std::nullopt,
                         std::to_string(tokenizer.tokens.size()) +
                             " tokens exceed config.json's vocab_size of " +
                             std::to_string(model.config.vocabSize));
    for (std::size_t id = tokenizer.tokens.size(); id < model.config.vocabSize; ++id) {
        tokenizer.tokens.push_back("[PAD" + std::to_string(id) + "]");
        if (!tokenizer.tokenTypes.empty()) tokenizer.tokenTypes.push_back(TokenType::Unused);
        if (!tokenizer.scores.empty()) tokenizer.scores.push_back(tokenizer.scores.back());
    }
    (void)Tokenizer(model.tokenizer); // checked at load, as for GGUF files
    return model;
}

} // namespace inferscope::models
