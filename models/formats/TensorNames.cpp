#include "models/formats/TensorNames.hpp"

namespace inferscope::models {

std::string layerTensorPrefix(std::uint32_t layer) {
    return "blk." + std::to_string(layer) + ".";
}

std::string layerTensorName(std::uint32_t layer, std::string_view tensor) {
    return layerTensorPrefix(layer).append(tensor);
}

} // namespace inferscope::models
