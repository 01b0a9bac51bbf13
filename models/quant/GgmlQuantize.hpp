#pragma once
// ggml's block formats Q8_0, Q4_0 and Q4_1, quantized as ggml's reference quantizers do
// (round to nearest; one f16 scale, plus an f16 minimum for Q4_1, per 32 values). Used to
// write synthetic GGUF files in the formats real downloads use.
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::models {

// values.size() must be a multiple of 32; throws ModelError otherwise or for other types.
std::vector<std::uint8_t> quantizeGgml(TensorType type, std::span<const float> values);

constexpr std::size_t kQ8_0Block = 32;
// The Q8_0 block quantizer, the one every Q8_0 packer calls: scale = absmax / 127,
// q = round(x / scale) (ties away from zero) within -127..127, codes 0 for an all-zero block.
// values: one block, or the shorter tail of a row (at most kQ8_0Block); codes: as many.
// Returns the f32 scale (GGUF stores it as fp16, the GPU's q8_0 layout as f32).
float quantizeQ8_0Block(std::span<const float> values, std::span<std::int8_t> codes);

} // namespace inferscope::models
