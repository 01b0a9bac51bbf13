#pragma once
// Run-time values that left the floats: weights finite in the file can still overflow (one
// norm weight of 1e30 makes the attention scores +Inf and then NaN), and a NaN logit row makes
// a sampler pick token 0 forever and perplexity print "nan" as if it were a result. The CPU
// reference checks each layer's tensors as it computes them, the Vulkan engine its logits per
// step (and the residual stream per layer on a probe run when they fail); both stop with a
// NonFiniteError naming the layer and the tensor.
#include "models/ModelError.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace inferscope::models {

class NonFiniteError : public ModelError {
public:
    using ModelError::ModelError;
};

struct NonFiniteAt {
    std::size_t index = 0; // into the values checked
    float value = 0.0f;
};

// The first NaN or infinite value, if any.
std::optional<NonFiniteAt> firstNonFinite(std::span<const float> values);
// "NaN", "+Inf" or "-Inf".
std::string nonFiniteName(float value);

// Throws NonFiniteError when `values` (rows of rowSize values, one per position from
// firstPosition on) hold a NaN or an infinity: "non-finite value at run time: layer 3's
// attention output (softmax(QK^T)V) holds NaN at position 5, element 17; ...". layer < 0 is
// a tensor outside the layers (the final norm, the logits).
void requireFinite(std::span<const float> values, std::size_t rowSize, std::size_t firstPosition,
                   int layer, const std::string& tensor);

// The message requireFinite throws, for a value found elsewhere (the engine's read-back).
std::string nonFiniteMessage(int layer, const std::string& tensor, std::size_t position,
                             std::size_t element, float value);

} // namespace inferscope::models
