#pragma once
// llama.cpp's quantization presets ("Q4_K_M", ...) and the tensor type its quantizer gives each
// weight of a dense decoder under them (src/llama-quant.cpp, llama_tensor_get_type, as of the
// llama-cpp-python 0.3.36 bundle): a preset is a default type plus a few rules that give
// attention V, FFN down, attention output and the output head more bits in some layers, then
// a fallback for rows that are not whole blocks of the type (Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0, Q2_K / Q3_K -> Q4_0, IQ4_XS -> IQ4_NL, anything else -> F16). Qwen2.5-0.5B's
// rows of 896 and SmolLM2's of 576 are not multiples of 256, so their "K-quant" files hold
// mostly Q5_0 or Q5_1. Used to write synthetic files of a real download's mix; the rules for
// importance matrices, mixtures of experts, Falcon and 70B models are left out.
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace inferscope::models {

enum class QuantPreset {
    F32,
    F16,
    BF16,
    Q8_0,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q2_K,
    Q3_K_S,
    Q3_K_M,
    Q3_K_L,
    Q4_K_S,
    Q4_K_M,
    Q5_K_S,
    Q5_K_M,
    Q6_K,
    IQ4_NL,
    IQ4_XS,
};

std::span<const QuantPreset> allQuantPresets();
// "q4_k_m" (the name llama-quantize takes, in upper case "Q4_K_M").
std::string_view quantPresetName(QuantPreset preset);
// The preset of that name in either case; nullopt for another name.
std::optional<QuantPreset> parseQuantPreset(std::string_view name);
// llama.cpp's file type number (general.file_type, LLAMA_FTYPE_*).
std::uint32_t quantPresetFileType(QuantPreset preset);

// What the rules need to know of the model.
struct QuantMixModel {
    std::uint32_t layers = 0;
    std::uint32_t heads = 0;
    std::uint32_t kvHeads = 0;
    bool tiedEmbeddings = false; // no output.weight: token_embd takes the output head's type
};

// The type of the 2-D weight `name` ("blk.3.ffn_down.weight", "token_embd.weight", ...) with
// rows of `cols` values under the preset.
TensorType presetTensorType(QuantPreset preset, const std::string& name, std::uint64_t cols,
                            const QuantMixModel& model);

} // namespace inferscope::models
