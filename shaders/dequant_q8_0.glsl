// Weight format Q8_0: each row's weights in blocks of 32 signed bytes (four per 32-bit word)
// sharing one f32 scale; all quant words come first, the scales start at word
// p.formatWords (matvec_params.glsl must be included before this file).
#define WEIGHT_BLOCK 32
#define CODE_BITS 8
#include "quant_codes.glsl"
// matvec_core.glsl: the path that reads four words of codes per fetch.
#define WEIGHT_BYTES

// The four quants at element e (a multiple of 4), unscaled.
vec4 weightQuants(uint c) { return int8Codes(c); }
// The scale of the block holding element e.
float weightScale(uint e) { return uintBitsToFloat(weightWord(p.formatWords + (e >> 5))); }

vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
