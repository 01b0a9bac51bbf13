// Weight format q4_1 (GGUF): blocks of 32 weights of a padded row, 4-bit codes q,
// w = q * d + m, one word per block holding fp16 d (low half) and m (high half).
// WEIGHT_NIBBLES: matvec_core.glsl's whole-word path applies d and m once per block.
#define WEIGHT_BLOCK 32
#define WEIGHT_NIBBLES
#define CODE_BITS 4
#include "quant_codes.glsl"

vec2 weightScaleMin(uint e) { return unpackHalf2x16(weightWord(p.formatWords + (e >> 5))); }
vec4 dequantize4(uint e, uint c) {
    const vec2 scaleMin = weightScaleMin(e);
    return vec4(nibbleCodes(c)) * scaleMin.x + scaleMin.y;
}
