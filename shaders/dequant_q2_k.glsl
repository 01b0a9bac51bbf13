// Weight format q2_k (GGUF Q2_K as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// super-blocks of 256, 2-bit codes, a byte per 16 holding a 4-bit scale and a 4-bit min, and
// fp16 d and dmin: w = d sc q - dmin m.
#define CODE_BITS 2
const uint PLANE_HIGH_BITS = 0;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 5;
const bool PLANE_HALVES = false;
const uint PLANE_SUB_BLOCK = 16;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 12 words per lane and chunk.
const bool PLANE_SCALE_WORD = true;
const bool PLANE_LANE_HALVES = false;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 12;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) {
    const uint j = planeChunkInGroup(e);
    return uvec4(0u, 0u, planeRecordWord(e, 4u),
                 (recordByte(e, 2u * j) << 16) | (recordByte(e, 2u * j + 1u) << 24));
}
vec4 planeScaleMins(uvec4 extras) {
    const vec2 dm = unpackHalf2x16(extras.z);
    const uint first = (extras.w >> 16) & 0xffu, second = extras.w >> 24;
    return vec4(dm.x * float(first & 15u), -(dm.y * float(first >> 4)), dm.x * float(second & 15u),
                -(dm.y * float(second >> 4)));
}
