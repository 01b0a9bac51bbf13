// Weight format nf4: 4-bit indices into the 16 NF4 levels (models/NormalFloat4), w =
// level[code] * absmax, one fp16 absmax per 64 consecutive weights of the unpadded matrix.
// The codebook: the levels' exact f32 bits as constants (the kernel test compares every
// weight with the host dequantizer bit for bit), selected by a branch-free tree over the
// code's four bits. Measured on lavapipe, a dynamically indexed constant array (or shared
// memory) is a per-lane gather for each weight and made nf4 decode 4x slower than int4; the
// 15 selects per four weights stay in registers on every device, need no fill and no barrier.
#define CODE_BITS 4
#include "quant_codes.glsl"

#define NF4_L0 uintBitsToFloat(0xbf800000u)
#define NF4_L1 uintBitsToFloat(0xbf3239b1u)
#define NF4_L2 uintBitsToFloat(0xbf066b2eu)
#define NF4_L3 uintBitsToFloat(0xbeca329eu)
#define NF4_L4 uintBitsToFloat(0xbe91a24bu)
#define NF4_L5 uintBitsToFloat(0xbe3d353du)
#define NF4_L6 uintBitsToFloat(0xbdba7869u)
#define NF4_L7 uintBitsToFloat(0x00000000u)
#define NF4_L8 uintBitsToFloat(0x3da2fb01u)
#define NF4_L9 uintBitsToFloat(0x3e24cadfu)
#define NF4_L10 uintBitsToFloat(0x3e7c04dau)
#define NF4_L11 uintBitsToFloat(0x3ead0336u)
#define NF4_L12 uintBitsToFloat(0x3ee1a4b5u)
#define NF4_L13 uintBitsToFloat(0x3f1007a9u)
#define NF4_L14 uintBitsToFloat(0x3f3913b0u)
#define NF4_L15 uintBitsToFloat(0x3f800000u)

vec4 nf4Levels(uvec4 code) {
    const bvec4 b0 = notEqual(code & 1u, uvec4(0u)), b1 = notEqual(code & 2u, uvec4(0u));
    const bvec4 b2 = notEqual(code & 4u, uvec4(0u)), b3 = notEqual(code & 8u, uvec4(0u));
    // mix() with a bool vector selects exactly (no arithmetic).
    const vec4 l01 = mix(vec4(NF4_L0), vec4(NF4_L1), b0), l23 = mix(vec4(NF4_L2), vec4(NF4_L3), b0);
    const vec4 l45 = mix(vec4(NF4_L4), vec4(NF4_L5), b0), l67 = mix(vec4(NF4_L6), vec4(NF4_L7), b0);
    const vec4 l89 = mix(vec4(NF4_L8), vec4(NF4_L9), b0), lab = mix(vec4(NF4_L10), vec4(NF4_L11), b0);
    const vec4 lcd = mix(vec4(NF4_L12), vec4(NF4_L13), b0), lef = mix(vec4(NF4_L14), vec4(NF4_L15), b0);
    const vec4 l03 = mix(l01, l23, b1), l47 = mix(l45, l67, b1);
    const vec4 l8b = mix(l89, lab, b1), lcf = mix(lcd, lef, b1);
    return mix(mix(l03, l47, b2), mix(l8b, lcf, b2), b3);
}

#ifdef ALIGNED_GROUPS
// Rows of a multiple of 64 weights: one absmax per row and chunk (see int4_group.glsl).
#define WEIGHT_BLOCK 64
vec4 weightQuants(uint c) { return nf4Levels(nibbleCodes(c)); }
float weightScale(uint e) { return scaleHalf(e >> 6); }
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
#else
vec4 dequantize4(uint e, uint c) {
    return nf4Levels(nibbleCodes(c)) * scaleHalf(logicalIndex(e) >> 6);
}
#endif
