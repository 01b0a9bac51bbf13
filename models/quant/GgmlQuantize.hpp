#pragma once
// ggml's block formats, quantized for synthetic GGUF files in the formats real downloads use:
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 as ggml's reference quantizers do (round to nearest; one f16
// scale, plus an f16 minimum for Q4_1 / Q5_1, per 32 values), IQ4_NL with the nearest
// codebook level, and the super-block types Q2_K ... Q6_K and IQ4_XS with a simple scale
// choice (models/quant/GgmlSuperBlocks.hpp): valid blocks, not llama.cpp's search.
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::models {

// values.size() must be a multiple of the type's block (32, or 256 for the super-block types);
// throws ModelError otherwise or for a type that is not a quantized block type.
std::vector<std::uint8_t> quantizeGgml(TensorType type, std::span<const float> values);

constexpr std::size_t kQ8_0Block = 32;
// The Q8_0 block quantizer, the one every Q8_0 packer calls: scale = absmax / 127,
// q = round(x / scale) (ties away from zero) within -127..127, codes 0 for an all-zero block.
// values: one block, or the shorter tail of a row (at most kQ8_0Block); codes: as many.
// Returns the f32 scale (GGUF stores it as fp16, the GPU's q8_0 layout as f32).
float quantizeQ8_0Block(std::span<const float> values, std::span<std::int8_t> codes);

} // namespace inferscope::models
