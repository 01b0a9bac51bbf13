// Weight format q5_0 (GGUF Q5_0 as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// 5-bit codes q (4 low bits, a high bit), w = (q - 16) d, one fp16 d per block of 32.
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 1;
const uint PLANE_GROUP = 32;
const uint PLANE_RECORD_WORDS = 0;
const bool PLANE_HALVES = true;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = -16;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 12 words per lane and chunk.
const bool PLANE_SCALE_WORD = false;
const bool PLANE_LANE_HALVES = true;
const bool PLANE_BYTE_PAIRS = false;
const uint PLANE_LANE_WORDS = 12;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    extras.w = planeHalfBits(e);
    return extras;
}
vec4 planeScaleMins(uvec4 extras) {
    const float d = unpackHalf2x16(extras.w).x;
    return vec4(d, 0.0, d, 0.0);
}
