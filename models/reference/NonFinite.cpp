#include "models/reference/NonFinite.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace inferscope::models {

std::optional<NonFiniteAt> firstNonFinite(std::span<const float> values) {
    // Integer tests of the exponent bits (all ones: NaN or Inf) in blocks the compiler can
    // vectorize; only a block that holds one is searched element by element.
    constexpr std::size_t kStride = 1024;
    constexpr std::uint32_t kExponent = 0x7f800000u;
    for (std::size_t begin = 0; begin < values.size(); begin += kStride) {
        const std::size_t end = std::min(values.size(), begin + kStride);
        std::uint32_t any = 0;
        for (std::size_t i = begin; i < end; ++i)
            any |=
                std::uint32_t((std::bit_cast<std::uint32_t>(values[i]) & kExponent) == kExponent);
        if (!any) continue;
        for (std::size_t i = begin; i < end; ++i)
            if (!std::isfinite(values[i])) return NonFiniteAt{i, values[i]};
    }
    return std::nullopt;
}

std::string nonFiniteName(float value) {
    if (std::isnan(value)) return "NaN";
    return value > 0 ? "+Inf" : "-Inf";
}

std::string nonFiniteMessage(int layer, const std::string& tensor, std::size_t position,
                             std::size_t element, float value) {
    const std::string where =
        layer >= 0 ? "layer " + std::to_string(layer) + "'s " + tensor : tensor;
    return "non-finite value at run time: " + where + " holds " + nonFiniteName(value) +
           " at position " + std::to_string(position) + ", element " + std::to_string(element) +
           " (the weights are finite in the file, so a value overflowed on the way; no result "
           "is given)";
}

void requireFinite(std::span<const float> values, std::size_t rowSize, std::size_t firstPosition,
                   int layer, const std::string& tensor) {
    const auto bad = firstNonFinite(values);
    if (!bad) return;
    const std::size_t row = rowSize ? bad->index / rowSize : 0;
    const std::size_t element = rowSize ? bad->index % rowSize : bad->index;
    throw NonFiniteError(nonFiniteMessage(layer, tensor, firstPosition + row, element, bad->value));
}

} // namespace inferscope::models
