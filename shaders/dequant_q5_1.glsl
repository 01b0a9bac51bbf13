// Weight format q5_1 (GGUF Q5_1 as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// 5-bit codes q, w = q d + m, one word (fp16 d, m) per block of 32.
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 1;
const uint PLANE_GROUP = 32;
const uint PLANE_RECORD_WORDS = 1;
const bool PLANE_HALVES = false;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 16 words per lane and chunk.
const bool PLANE_SCALE_WORD = true;
const bool PLANE_LANE_HALVES = false;
const bool PLANE_BYTE_PAIRS = false;
const uint PLANE_LANE_WORDS = 16;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    extras.z = planeRecordWord(e, 0u);
    return extras;
}
vec4 planeScaleMins(uvec4 extras) {
    const vec2 dm = unpackHalf2x16(extras.z);
    return vec4(dm, dm);
}
