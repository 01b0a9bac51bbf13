// Weight format iq4_xs (GGUF IQ4_XS as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// super-blocks of 256 with fp16 d and a 6-bit scale per 32 (stored plus 32), 4-bit indices
// into the IQ4_NL levels: w = d (ls - 32) level[q].
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 0;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 2;
const bool PLANE_HALVES = false;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = true;
// The lane-scale copy's fields (matvec_planes.glsl): 8 words per lane and chunk.
const bool PLANE_SCALE_WORD = false;
const bool PLANE_LANE_HALVES = true;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 8;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) {
    const uint head = planeRecordWord(e, 0u), j = planeChunkInGroup(e);
    const uint low = (recordByte(e, 4u + (j >> 1)) >> ((j & 1u) << 2)) & 15u;
    const uint scale = low | (((head >> (16u + 2u * j)) & 3u) << 4);
    return uvec4(0u, 0u, 0u, (head & 0xffffu) | (scale << 16));
}
vec4 planeScaleMins(uvec4 extras) {
    const float d = unpackHalf2x16(extras.w).x * float(int((extras.w >> 16) & 0xffu) - 32);
    return vec4(d, 0.0, d, 0.0);
}
