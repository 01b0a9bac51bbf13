// Weight format Q8_0: each row's weights in blocks of 32 signed bytes (four per 32-bit word)
// sharing one f32 scale; all quant words come first, the scales start at word
// p.formatWords (matvec_params.glsl must be included before this file).
#define WEIGHT_BLOCK 32
layout(std430, binding = 0) readonly buffer Weights { uint weightWords[]; };

// The four quants at element e (a multiple of 4), unscaled.
vec4 weightQuants(uint e) {
    const uint word = weightWords[e >> 2];
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word)) >> 24);
}
// The scale of the block holding element e.
float weightScale(uint e) { return uintBitsToFloat(weightWords[p.formatWords + (e >> 5)]); }

vec4 dequantize4(uint e) { return weightQuants(e) * weightScale(e); }
