#include "models/formats/HalfFloat.hpp"

#include <bit>
#include <cmath>

namespace inferscope::models {

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1F;
    const std::uint32_t mantissa = h & 0x3FF;
    if (exponent == 0) {
        // Zero or subnormal: mantissa x 2^-24, exact in float.
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

std::uint16_t floatToHalf(float f) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
    const std::uint32_t magnitude = bits & 0x7FFFFFFF;
    if (magnitude >= 0x7F800000) {
        if (magnitude == 0x7F800000) return sign | 0x7C00;
        // NaN: keep it quiet and keep the top payload bits.
        return static_cast<std::uint16_t>(sign | 0x7E00 | ((magnitude >> 13) & 0x3FF));
    }
    const int exponent = static_cast<int>(magnitude >> 23) - 127;
    if (exponent > 15) return sign | 0x7C00;
    std::uint32_t result;
    std::uint32_t remainder, halfway;
    if (exponent >= -14) {
        // Normal half: keep 10 of the 23 mantissa bits.
        result = (static_cast<std::uint32_t>(exponent + 15) << 10) | ((magnitude >> 13) & 0x3FF);
        remainder = magnitude & 0x1FFF;
        halfway = 0x1000;
    } else {
        // Subnormal half (units of 2^-24); float subnormals and anything below 2^-25 are 0.
        const int shift = -exponent - 1; // 14 .. 126
        if (shift > 24) return sign;
        const std::uint32_t significand = (magnitude & 0x7FFFFF) | 0x800000;
        result = significand >> shift;
        remainder = significand & ((1u << shift) - 1);
        halfway = 1u << (shift - 1);
    }
    // Round to nearest, ties to even; a carry may roll over into the exponent, which is
    // still the right encoding (up to infinity).
    if (remainder > halfway || (remainder == halfway && (result & 1))) ++result;
    return static_cast<std::uint16_t>(sign | result);
}

} // namespace inferscope::models
