// Weight format q4_1 (GGUF): blocks of 32 weights of a padded row, 4-bit codes q,
// w = q * d + m, one word per block holding fp16 d (low half) and m (high half). No
// WEIGHT_BLOCK: the broadcast path's shortcut (quants * one scale) has no room for the min.
#include "quant_codes.glsl"

vec4 dequantize4(uint e) {
    const vec2 dm = unpackHalf2x16(weightWords[p.formatWords + (e >> 5)]);
    return vec4(nibbleCodes(e)) * dm.x + dm.y;
}
