// Shared body of the int4 group formats: 4-bit codes c = q + 8, w = (c - 8) * scale, one fp16
// scale per 2^INT4_GROUP_SHIFT consecutive weights of the unpadded matrix (groups may cross
// rows, as the host packs them). The includer defines INT4_GROUP_SHIFT.
#define CODE_BITS 4
#include "quant_codes.glsl"

#ifdef ALIGNED_GROUPS
// Rows of a multiple of 64 weights (every real model; the host sets DeviceMatrix::
// alignedGroups): no padding, and a chunk of the broadcast path (4 x WG <= 64 columns, at a
// multiple of its width) lies inside one group, so the scale loads once per row and chunk.
#define WEIGHT_BLOCK 64
vec4 weightQuants(uint c) { return vec4(nibbleCodes(c)) - 8.0; }
float weightScale(uint e) { return scaleHalf(e >> INT4_GROUP_SHIFT); }
// Whole-word path of matvec_core.glsl: w = code * scale + min per block.
#define WEIGHT_NIBBLES
vec2 scaleMinOf(float scale) { return vec2(scale, -8.0 * scale); }
vec2 weightScaleMin(uint e) { return scaleMinOf(weightScale(e)); }
// The matrix may carry a copy of its scales in a lane's slot order (matvec_core.glsl).
#define LANE_SCALE_LAYOUT
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
#else
// Any row length: the scale is looked up per four weights (a chunk may straddle two groups).
vec4 dequantize4(uint e, uint c) {
    return (vec4(nibbleCodes(c)) - 8.0) * scaleHalf(logicalIndex(e) >> INT4_GROUP_SHIFT);
}
#endif
