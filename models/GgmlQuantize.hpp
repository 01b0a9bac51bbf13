#pragma once
// ggml's block formats Q8_0, Q4_0 and Q4_1, quantized as ggml's reference quantizers do
// (round to nearest; one f16 scale, plus an f16 minimum for Q4_1, per 32 values). Used to
// write synthetic GGUF files in the formats real downloads use.
#include "models/TensorType.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::models {

// values.size() must be a multiple of 32; throws ModelError otherwise or for other types.
std::vector<std::uint8_t> quantizeGgml(TensorType type, std::span<const float> values);

} // namespace inferscope::models
