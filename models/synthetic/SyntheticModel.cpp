// Synthetic models: deterministic weights from a seeded generator, planted outlier
// dimensions, and a small byte-level BPE tokenizer trained on a built-in English text,
// written as GGUF (llama.cpp conventions) or as an HF safetensors folder.
#include "models/synthetic/SyntheticModel.hpp"

#include "models/ModelError.hpp"
#include "models/formats/GgufWriter.hpp"
#include "models/formats/SafetensorsWriter.hpp"
#include "models/formats/TensorNames.hpp"
#include "models/quant/GgmlQuantize.hpp"
#include "models/synthetic/SyntheticVocabulary.hpp"
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

// --- Weights ---------------------------------------------------------------------------

// How a tensor's random values carry the planted outlier dimensions.
enum class Outliers {
    None,
    Columns,       // embedding-like: every row's outlier columns scaled up
    Rows,          // writes the residual stream: the outlier rows scaled up
    ShrinkEntries, // a norm over the residual stream: the outlier entries scaled down
};

// One tensor, as a recipe: its values are made when it is written (memory stays at one
// tensor). Values are row-major in HF row order; GGUF files permute or fuse them as they go.
struct SyntheticTensor {
    std::string hfName;
    std::string ggufName;
    std::vector<std::uint64_t> rowsCols; // {rows, cols} for matrices, {n} for vectors
    double mean = 0.0, deviation = 1.0;
    Outliers outliers = Outliers::None;
    bool norm = false; // an RMSNorm weight (gemma3 stores them as w - 1 in HF files)
    bool matrix() const { return rowsCols.size() == 2; }
};

std::uint32_t tokenizerTokens(const SyntheticModelSpec& spec) {
    return spec.tokenizerTokens ? spec.tokenizerTokens : spec.vocabSize;
}

bool isArchitecture(const SyntheticModelSpec& spec, std::initializer_list<const char*> names) {
    for (const char* name : names)
        if (spec.architecture == name) return true;
    return false;
}

// GGUF files of these rotate adjacent pairs (llama.cpp's converter permutes their Q/K rows).
bool adjacentRopeInGguf(const SyntheticModelSpec& spec) {
    return isArchitecture(spec, {"llama", "smollm3"});
}

void checkSpec(const SyntheticModelSpec& spec) {
    if (!isArchitecture(spec, {"llama", "qwen2", "qwen3", "gemma3", "phi3", "smollm3"}))
        throw ModelError("synthetic model", "architecture", std::nullopt,
                         "'" + spec.architecture +
                             "' is not llama, qwen2, qwen3, gemma3, phi3 or smollm3");
    syntheticConfig(spec).validate("synthetic model spec");
    if (spec.architecture == "phi3" && spec.heads * spec.headDim != spec.hiddenSize)
        throw ModelError("synthetic model", "headDim", std::nullopt,
                         "phi3 needs heads x head dim = hidden size (llama.cpp's phi3 assumes it)");
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

// All weights, as recipes. Scales keep activations of order one: matrices ~ N(0, 1/fan_in);
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
    const bool gemma = spec.architecture == "gemma3";
    std::vector<SyntheticTensor> tensors;

    auto make = [&](std::string hfName, std::string ggufName, std::vector<std::uint64_t> shape,
                    double mean, double deviation, Outliers outliers = Outliers::None,
                    bool norm = false) {
        tensors.push_back({std::move(hfName), std::move(ggufName), std::move(shape), mean,
                           deviation, outliers, norm});
    };

    make("model.embed_tokens.weight", "token_embd.weight", {vocab, hidden}, 0, 1,
         Outliers::Columns);
    // Final norm weights near 2 / sqrt(hidden): logits of standard deviation ~2.
    const double outputNormMean = 2.0 / std::sqrt(static_cast<double>(hidden));
    make("model.norm.weight", "output_norm.weight", {hidden}, outputNormMean, 0.1 * outputNormMean,
         Outliers::ShrinkEntries, true);
    if (!spec.tiedEmbeddings)
        make("lm_head.weight", "output.weight", {vocab, hidden}, 0, 1, Outliers::Columns);

    for (std::uint32_t layer = 0; layer < spec.layers; ++layer) {
        const std::string hf = "model.layers." + std::to_string(layer) + ".";
        const std::string gguf = layerTensorPrefix(layer);
        make(hf + "input_layernorm.weight", gguf + "attn_norm.weight", {hidden}, 1.0, 0.1,
             Outliers::ShrinkEntries, true);
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
        if (config.qkNorm) {
            make(hf + "self_attn.q_norm.weight", gguf + "attn_q_norm.weight", {spec.headDim}, 1.0,
                 0.1, Outliers::None, true);
            make(hf + "self_attn.k_norm.weight", gguf + "attn_k_norm.weight", {spec.headDim}, 1.0,
                 0.1, Outliers::None, true);
        }
        make(hf + "self_attn.o_proj.weight", gguf + "attn_output.weight", {hidden, queryWidth}, 0,
             1.0 / std::sqrt(static_cast<double>(queryWidth)), Outliers::Rows);
        if (gemma) {
            // Gemma's post_attention_layernorm follows the attention; the FFN has a norm
            // before (pre_feedforward) and after (post_feedforward).
            make(hf + "post_attention_layernorm.weight", gguf + "post_attention_norm.weight",
                 {hidden}, 1.0, 0.1, Outliers::None, true);
            make(hf + "pre_feedforward_layernorm.weight", gguf + "ffn_norm.weight", {hidden}, 1.0,
                 0.1, Outliers::ShrinkEntries, true);
            make(hf + "post_feedforward_layernorm.weight", gguf + "post_ffw_norm.weight", {hidden},
                 1.0, 0.1, Outliers::None, true);
        } else {
            make(hf + "post_attention_layernorm.weight", gguf + "ffn_norm.weight", {hidden}, 1.0,
                 0.1, Outliers::ShrinkEntries, true);
        }
        make(hf + "mlp.gate_proj.weight", gguf + "ffn_gate.weight", {ffn, hidden}, 0, inputScale);
        make(hf + "mlp.up_proj.weight", gguf + "ffn_up.weight", {ffn, hidden}, 0, inputScale);
        make(hf + "mlp.down_proj.weight", gguf + "ffn_down.weight", {hidden, ffn}, 0,
             1.0 / std::sqrt(static_cast<double>(ffn)), Outliers::Rows);
    }
    return tensors;
}

// The values of one tensor (its stream depends only on the seed and its GGUF name), with the
// outliers planted. Norm weights are the multiplier the model applies (1 + w for gemma).
std::vector<float> valuesOf(const SyntheticModelSpec& spec, const SyntheticTensor& tensor) {
    std::uint64_t count = 1;
    for (auto dim : tensor.rowsCols) count *= dim;
    std::vector<float> values =
        normalValues(spec.seed, tensor.ggufName, count, tensor.mean, tensor.deviation);
    const float scale = spec.outlierScale;
    const std::uint64_t cols = tensor.matrix() ? tensor.rowsCols[1] : 1;
    switch (tensor.outliers) {
    case Outliers::None:
        break;
    case Outliers::Columns:
        for (std::uint64_t row = 0; row < tensor.rowsCols[0]; ++row)
            for (std::uint32_t dim : spec.outlierDims) values[row * cols + dim] *= scale;
        break;
    case Outliers::Rows:
        for (std::uint32_t dim : spec.outlierDims)
            for (std::uint64_t col = 0; col < cols; ++col) values[dim * cols + col] *= scale;
        break;
    case Outliers::ShrinkEntries:
        for (std::uint32_t dim : spec.outlierDims) values[dim] /= scale;
        break;
    }
    return values;
}

// Gemma's HF norms hold w, the model multiplies by 1 + w; llama.cpp's converter stores 1 + w.
// Both files are made from the HF value, so the loaders' 1 + w is the same float operation.
std::vector<float> gemmaHfNorm(std::vector<float> multiplier) {
    for (float& value : multiplier) value = value - 1.0f;
    return multiplier;
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

// A file tensor made of several recipes' rows stacked (phi3's fused matrices), or one.
struct FileTensor {
    std::string name;
    std::vector<const SyntheticTensor*> parts;
};

// The tensors as a file of `architecture` holds them, in order: phi3 fuses Q|K|V
// (attn_qkv / qkv_proj) and gate|up (GGUF ffn_up with 2 x ffn rows / gate_up_proj).
std::vector<FileTensor> fileTensors(const SyntheticModelSpec& spec,
                                    const std::vector<SyntheticTensor>& tensors, bool gguf) {
    std::vector<FileTensor> out;
    const bool phi3 = spec.architecture == "phi3";
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const SyntheticTensor& tensor = tensors[i];
        const std::string& name = gguf ? tensor.ggufName : tensor.hfName;
        if (phi3 && tensor.ggufName.ends_with("attn_q.weight")) {
            const std::string stem = name.substr(0, name.size() - (gguf ? 13 : 23));
            out.push_back({stem + (gguf ? "attn_qkv.weight" : "self_attn.qkv_proj.weight"),
                           {&tensors[i], &tensors[i + 1], &tensors[i + 2]}});
            i += 2;
        } else if (phi3 && tensor.ggufName.ends_with("ffn_gate.weight")) {
            const std::string stem = name.substr(0, name.size() - (gguf ? 15 : 20));
            out.push_back({stem + (gguf ? "ffn_up.weight" : "mlp.gate_up_proj.weight"),
                           {&tensors[i], &tensors[i + 1]}});
            ++i;
        } else {
            out.push_back({name, {&tensor}});
        }
    }
    return out;
}

// The values of a file tensor in the file's layout.
std::vector<float> fileValues(const SyntheticModelSpec& spec, const FileTensor& file, bool gguf) {
    std::vector<float> values;
    for (const SyntheticTensor* part : file.parts) {
        std::vector<float> partValues = valuesOf(spec, *part);
        const std::string& name = part->ggufName;
        const bool query = name.ends_with("attn_q.weight") || name.ends_with("attn_q.bias");
        const bool key = name.ends_with("attn_k.weight") || name.ends_with("attn_k.bias");
        if (gguf && adjacentRopeInGguf(spec) && (query || key)) {
            const std::uint64_t cols = part->matrix() ? part->rowsCols[1] : 1;
            partValues = permuteForAdjacentRope(partValues, query ? spec.heads : spec.kvHeads,
                                                spec.headDim, cols);
        }
        if (part->norm && spec.architecture == "gemma3") {
            partValues = gemmaHfNorm(std::move(partValues));
            if (gguf)
                for (float& value : partValues) value = value + 1.0f;
        }
        // One part (all but phi3's fused matrices): moved, not copied; an embedding table of
        // Qwen2.5-0.5B's shape is 545 MB of floats, and a copy doubled the writer's peak.
        if (values.empty())
            values = std::move(partValues);
        else
            values.insert(values.end(), partValues.begin(), partValues.end());
    }
    return values;
}

std::vector<std::uint64_t> fileRowsCols(const FileTensor& file) {
    std::vector<std::uint64_t> rowsCols = file.parts.front()->rowsCols;
    for (std::size_t i = 1; i < file.parts.size(); ++i) rowsCols[0] += file.parts[i]->rowsCols[0];
    return rowsCols;
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
    config.ropePairing = adjacentRopeInGguf(spec) ? RopePairing::Adjacent : RopePairing::SplitHalf;
    config.qkNorm = isArchitecture(spec, {"qwen3", "gemma3"});
    if (spec.architecture == "smollm3")
        for (std::uint32_t layer = 3; layer < spec.layers; layer += 4)
            config.noRopeLayers.push_back(layer);
    if (spec.architecture == "gemma3") {
        config.postNorms = true;
        config.activation = FfnActivation::GeluTanh;
        config.embeddingScale = std::sqrt(static_cast<float>(spec.hiddenSize));
        if (spec.slidingWindow > 0) {
            config.slidingWindow = spec.slidingWindow;
            config.ropeThetaWindow = spec.ropeThetaWindow;
            const std::uint32_t period = spec.slidingWindowPattern;
            for (std::uint32_t layer = 0; layer < spec.layers; ++layer)
                config.layerSpans.push_back(period == 0 || layer % period < period - 1
                                                ? AttentionSpan::Window
                                                : AttentionSpan::Global);
        }
    }
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
    // llama.cpp gives tokens of models whose lower-cased name holds "phi3" or "phi-3" special
    // attributes by name ("</s>", which this vocabulary lacks): the phi3 fixture avoids both.
    writer.set("general.name",
               spec.architecture == "phi3" ? std::string("synthetic-phi 3") : config.name);
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
    if (spec.architecture == "gemma3" && spec.slidingWindow > 0) {
        writer.set(arch + "attention.sliding_window", std::uint32_t{spec.slidingWindow});
        writer.set(arch + "attention.sliding_window_pattern",
                   std::uint32_t{spec.slidingWindowPattern});
        writer.set(arch + "rope.freq_base_swa", spec.ropeThetaWindow);
    }
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
    writer.set("tokenizer.chat_template", std::string(syntheticChatTemplate));

    const auto tensors = std::make_shared<const std::vector<SyntheticTensor>>(buildWeights(spec));
    for (const FileTensor& tensor : fileTensors(spec, *tensors, true)) {
        const std::vector<std::uint64_t> rowsCols = fileRowsCols(tensor);
        // GGUF order: contiguous dimension first.
        std::vector<std::uint64_t> shape(rowsCols.rbegin(), rowsCols.rend());
        TensorType type = rowsCols.size() == 2 ? spec.weightType : TensorType::F32;
        if (rowsCols.size() == 2 && spec.typeMix)
            type = presetTensorType(*spec.typeMix, tensor.name, rowsCols[1],
                                    {spec.layers, spec.heads, spec.kvHeads, spec.tiedEmbeddings});
        writer.addTensorLater(tensor.name, type, std::move(shape), [&spec, tensor, type, tensors] {
            return encodeValues(type, fileValues(spec, tensor, true));
        });
    }
    writer.write(file);
}

namespace {

const char* hfClassName(const std::string& architecture) {
    if (architecture == "qwen2") return "Qwen2ForCausalLM";
    if (architecture == "qwen3") return "Qwen3ForCausalLM";
    if (architecture == "gemma3") return "Gemma3ForCausalLM";
    if (architecture == "phi3") return "Phi3ForCausalLM";
    if (architecture == "smollm3") return "SmolLM3ForCausalLM";
    return "LlamaForCausalLM";
}

// The config.json fields that set each architecture apart, as transformers writes them.
void addArchitectureFields(const SyntheticModelSpec& spec, const ModelConfig& config,
                           nlohmann::ordered_json& json) {
    if (spec.architecture == "qwen3") json["attention_bias"] = false;
    if (spec.architecture == "smollm3") {
        std::vector<int> ropeLayers(spec.layers, 1);
        for (std::uint32_t layer : config.noRopeLayers) ropeLayers[layer] = 0;
        json["no_rope_layers"] = ropeLayers;
        json["no_rope_layer_interval"] = 4;
    }
    if (spec.architecture == "phi3") json["original_max_position_embeddings"] = spec.contextLength;
    if (spec.architecture != "gemma3") return;
    json["query_pre_attn_scalar"] = spec.headDim;
    json["final_logit_softcapping"] = nullptr;
    json["attn_logit_softcapping"] = nullptr;
    json["rope_local_base_freq"] = static_cast<double>(spec.ropeThetaWindow);
    if (spec.slidingWindow > 0) {
        json["sliding_window"] = spec.slidingWindow;
        std::vector<std::string> types;
        for (std::uint32_t layer = 0; layer < spec.layers; ++layer)
            types.push_back(config.windowed(layer) ? "sliding_attention" : "full_attention");
        json["layer_types"] = types;
    }
}

} // namespace

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
    const std::vector<SyntheticTensor> tensors = buildWeights(spec);
    for (const FileTensor& tensor : fileTensors(spec, tensors, false)) {
        const std::vector<std::uint64_t> rowsCols = fileRowsCols(tensor);
        const TensorType type = rowsCols.size() == 2 ? spec.weightType : TensorType::F32;
        weights.addTensorLater(tensor.name, type, rowsCols, [&spec, tensor, type] {
            return encodeFloats(type, fileValues(spec, tensor, false));
        });
    }
    weights.write(folder / "model.safetensors");

    using Json = nlohmann::ordered_json;
    Json configJson = {
        {"architectures", {hfClassName(spec.architecture)}},
        {"model_type", spec.architecture == "gemma3" ? "gemma3_text" : spec.architecture},
        {spec.architecture == "gemma3" ? "hidden_activation" : "hidden_act",
         spec.architecture == "gemma3" ? "gelu_pytorch_tanh" : "silu"},
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
    addArchitectureFields(spec, config, configJson);
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
        {"chat_template", syntheticChatTemplate},
        {"clean_up_tokenization_spaces", false},
        {"model_max_length", spec.contextLength},
        {"tokenizer_class", "GPT2Tokenizer"},
    };
    writeText(folder / "tokenizer_config.json", tokenizerConfig.dump(2) + "\n");
}

} // namespace inferscope::models
