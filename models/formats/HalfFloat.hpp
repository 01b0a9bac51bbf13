#pragma once
// The IEEE half-float codec: the one conversion used by every reader, quantizer and GPU packer,
// so f16 weights on the host and on the GPU round identically.
#include <cstdint>

namespace inferscope::models {

float halfToFloat(std::uint16_t h); // exact (every half is a float)
std::uint16_t floatToHalf(float f); // round to nearest even; overflow gives infinity

} // namespace inferscope::models
