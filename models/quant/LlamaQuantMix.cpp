#include "models/quant/LlamaQuantMix.hpp"

#include <cctype>
#include <vector>

namespace inferscope::models {

namespace {

struct PresetInfo {
    QuantPreset preset;
    std::string_view name;
    TensorType defaultType;
    std::uint32_t fileType;
};

constexpr PresetInfo kPresets[] = {
    {QuantPreset::F32, "f32", TensorType::F32, 0},
    {QuantPreset::F16, "f16", TensorType::F16, 1},
    {QuantPreset::BF16, "bf16", TensorType::BF16, 32},
    {QuantPreset::Q8_0, "q8_0", TensorType::Q8_0, 7},
    {QuantPreset::Q4_0, "q4_0", TensorType::Q4_0, 2},
    {QuantPreset::Q4_1, "q4_1", TensorType::Q4_1, 3},
    {QuantPreset::Q5_0, "q5_0", TensorType::Q5_0, 8},
    {QuantPreset::Q5_1, "q5_1", TensorType::Q5_1, 9},
    {QuantPreset::Q2_K, "q2_k", TensorType::Q2_K, 10},
    {QuantPreset::Q3_K_S, "q3_k_s", TensorType::Q3_K, 11},
    {QuantPreset::Q3_K_M, "q3_k_m", TensorType::Q3_K, 12},
    {QuantPreset::Q3_K_L, "q3_k_l", TensorType::Q3_K, 13},
    {QuantPreset::Q4_K_S, "q4_k_s", TensorType::Q4_K, 14},
    {QuantPreset::Q4_K_M, "q4_k_m", TensorType::Q4_K, 15},
    {QuantPreset::Q5_K_S, "q5_k_s", TensorType::Q5_K, 16},
    {QuantPreset::Q5_K_M, "q5_k_m", TensorType::Q5_K, 17},
    {QuantPreset::Q6_K, "q6_k", TensorType::Q6_K, 18},
    {QuantPreset::IQ4_NL, "iq4_nl", TensorType::IQ4_NL, 25},
    {QuantPreset::IQ4_XS, "iq4_xs", TensorType::IQ4_XS, 30},
};

const PresetInfo& info(QuantPreset preset) {
    for (const auto& p : kPresets)
        if (p.preset == preset) return p;
    return kPresets[0];
}

bool isBlockType(TensorType type) {
    return tensorTypeTraits(type).blockElements > 1;
}

// The layer of "blk.N....", or -1.
int layerOf(const std::string& name) {
    if (name.rfind("blk.", 0) != 0) return -1;
    int layer = 0;
    std::size_t i = 4;
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i)
        layer = layer * 10 + (name[i] - '0');
    return layer;
}

bool contains(const std::string& name, std::string_view part) {
    return name.find(part) != std::string::npos;
}

// The layers llama.cpp gives more bits: the first and last eighth, and every third between.
bool useMoreBits(int layer, int layers) {
    return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// Rows that are not whole blocks of the chosen type take a type of blocks of 32.
TensorType fallback(TensorType type, std::uint64_t cols) {
    const std::uint64_t block = tensorTypeTraits(type).blockElements;
    if (cols % block == 0) return type;
    TensorType replacement = type;
    switch (type) {
    case TensorType::IQ4_XS:
        replacement = TensorType::IQ4_NL;
        break;
    case TensorType::Q2_K:
    case TensorType::Q3_K:
        replacement = TensorType::Q4_0;
        break;
    case TensorType::Q4_K:
        replacement = TensorType::Q5_0;
        break;
    case TensorType::Q5_K:
        replacement = TensorType::Q5_1;
        break;
    case TensorType::Q6_K:
        replacement = TensorType::Q8_0;
        break;
    default:
        break;
    }
    return cols % tensorTypeTraits(replacement).blockElements == 0 ? replacement : TensorType::F16;
}

} // namespace

std::span<const QuantPreset> allQuantPresets() {
    static const std::vector<QuantPreset> presets = [] {
        std::vector<QuantPreset> list;
        for (const auto& p : kPresets) list.push_back(p.preset);
        return list;
    }();
    return presets;
}

std::string_view quantPresetName(QuantPreset preset) {
    return info(preset).name;
}

std::optional<QuantPreset> parseQuantPreset(std::string_view name) {
    std::string lower(name);
    for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    for (const auto& p : kPresets)
        if (p.name == lower) return p.preset;
    return std::nullopt;
}

std::uint32_t quantPresetFileType(QuantPreset preset) {
    return info(preset).fileType;
}

TensorType presetTensorType(QuantPreset preset, const std::string& name, std::uint64_t cols,
                            const QuantMixModel& model) {
    const TensorType base = info(preset).defaultType;
    if (!isBlockType(base)) return base; // F32, F16, BF16: every matrix as it is
    using P = QuantPreset;
    const int layer = layerOf(name), layers = int(model.layers);
    const std::uint32_t gqa = model.kvHeads ? model.heads / model.kvHeads : 1;
    TensorType type = base;
    const bool output = name == "output.weight";
    const bool embedding = name == "token_embd.weight";
    if (output || (embedding && model.tiedEmbeddings)) {
        // The output head (or the table that doubles as it) gets Q6_K, or Q8_0 where its rows
        // are not whole blocks of the preset's type; a Q8_0 preset keeps Q8_0.
        if (cols % tensorTypeTraits(base).blockElements != 0)
            type = TensorType::Q8_0;
        else if (base != TensorType::Q8_0)
            type = TensorType::Q6_K;
    } else if (embedding) {
        type = base;
    } else if (contains(name, "attn_v.weight")) {
        if (preset == P::Q2_K)
            type = gqa >= 4 ? TensorType::Q4_K : TensorType::Q3_K;
        else if (preset == P::Q3_K_M)
            type = layer < 2 ? TensorType::Q5_K : TensorType::Q4_K;
        else if (preset == P::Q3_K_L)
            type = TensorType::Q5_K;
        else if ((preset == P::IQ4_NL || preset == P::IQ4_XS) && gqa >= 4)
            type = TensorType::Q5_K;
        else if ((preset == P::Q4_K_M || preset == P::Q5_K_M) && useMoreBits(layer, layers))
            type = TensorType::Q6_K;
        else if (preset == P::Q4_K_S && layer < 4)
            type = TensorType::Q5_K;
    } else if (contains(name, "ffn_down")) {
        if (preset == P::Q2_K)
            type = TensorType::Q3_K;
        else if (preset == P::Q3_K_M)
            type = layer < layers / 16 ? TensorType::Q5_K : TensorType::Q4_K;
        else if (preset == P::Q3_K_L)
            type = TensorType::Q5_K;
        else if (preset == P::Q4_K_M) {
            if (useMoreBits(layer, layers)) type = TensorType::Q6_K;
        } else if (layer < layers / 8 && (preset == P::IQ4_NL || preset == P::IQ4_XS))
            type = TensorType::Q5_K;
        else if (preset == P::Q5_K_M && useMoreBits(layer, layers))
            type = TensorType::Q6_K;
        else if (preset == P::Q4_K_S && layer < layers / 8)
            type = TensorType::Q5_K;
    } else if (contains(name, "attn_output.weight")) {
        if (preset == P::Q2_K)
            type = TensorType::Q3_K;
        else if (preset == P::Q3_K_M)
            type = TensorType::Q4_K;
        else if (preset == P::Q3_K_L)
            type = TensorType::Q5_K;
    }
    return fallback(type, cols);
}

} // namespace inferscope::models
