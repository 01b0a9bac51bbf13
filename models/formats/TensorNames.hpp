#pragma once
// GGUF's names for per-layer tensors, "blk.<layer>.<tensor>": the one place that spells them
// (readers map other files' names onto these, the engine and the reference look them up).
#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope::models {

// "blk.<layer>." (the prefix every tensor of that layer shares).
std::string layerTensorPrefix(std::uint32_t layer);
// "blk.<layer>.<tensor>", e.g. layerTensorName(3, "attn_q.weight") = "blk.3.attn_q.weight".
std::string layerTensorName(std::uint32_t layer, std::string_view tensor);

} // namespace inferscope::models
