// Weight format q4_0 (GGUF): blocks of 32 weights of a padded row, 4-bit codes q,
// w = (q - 8) * d, one fp16 d per block (two per word).
#define WEIGHT_BLOCK 32
#define CODE_BITS 4
#include "quant_codes.glsl"

vec4 weightQuants(uint c) { return vec4(nibbleCodes(c)) - 8.0; }
float weightScale(uint e) { return scaleHalf(e >> 5); }
// Whole-word path of matvec_core.glsl: w = code * scale + min per block.
#define WEIGHT_NIBBLES
vec2 weightScaleMin(uint e) {
    const float scale = weightScale(e);
    return vec2(scale, -8.0 * scale);
}
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
