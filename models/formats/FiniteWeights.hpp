#pragma once
// A cheap load-time check that no stored weight is NaN or infinite: such a model computes
// NaN logits and "generates" token 0 forever without a word. Plain float tensors are checked
// element by element; the block formats only through their f16 scales, since their quants
// are small integers and a block's values are finite exactly when its scales are.
#include "models/WeightStore.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace inferscope::models {

struct NonFiniteValue {
    std::uint64_t byteOffset = 0; // within the tensor's data
    std::string what;             // "element 12 is NaN", "block 3's scale is +Inf"
};

// The first non-finite value or scale of the tensor, if any.
std::optional<NonFiniteValue> findNonFinite(const StoredTensor& tensor);

// Throws ModelError naming the file, the tensor and the byte offset of the first bad value.
void requireFiniteWeights(const WeightStore& weights, const std::string& file);

} // namespace inferscope::models
