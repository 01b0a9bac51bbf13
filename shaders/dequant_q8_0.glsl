// Weight format Q8_0: each row's weights in blocks of 32 signed bytes (four per 32-bit word)
// sharing one f32 scale; all quant words come first, the scales start at word
// p.formatWords (matvec_params.glsl must be included before this file).
#define WEIGHT_BLOCK 32
// Uniform texel buffer of 32-bit words: lavapipe gathers texels with vector loads, while it
// reads a storage buffer lane by lane (compute/vulkan/Pipeline.hpp).
layout(binding = 0) uniform usamplerBuffer weightTexels;
uint weightWord(uint i) { return texelFetch(weightTexels, int(i)).x; }

// The four quants at element e (a multiple of 4), unscaled.
vec4 weightQuants(uint e) {
    const uint word = weightWord(e >> 2);
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word)) >> 24);
}
// The scale of the block holding element e.
float weightScale(uint e) { return uintBitsToFloat(weightWord(p.formatWords + (e >> 5))); }

vec4 dequantize4(uint e) { return weightQuants(e) * weightScale(e); }
