#pragma once
// The activations the INT8_ACTIVATIONS kernels multiply with (shaders/matvec_core.glsl,
// EngineOptions::int8Activations): each chunk of 32 values of a row, counted from the row's
// first column, is rounded to 8-bit codes xq = roundEven(x * 127 / amax), amax the chunk's
// largest |x|, and stands for xhat = xq * amax / 127. llama.cpp's CPU backend rounds its
// activations the same way (its q8_1 blocks) before a 4-bit dot product.
#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::compute {

inline constexpr std::uint32_t kActivationChunk = 32;

// xhat for one row (any length; a last partial chunk is rounded on its own).
std::vector<float> roundActivationsInt8(std::span<const float> row);

} // namespace inferscope::compute
