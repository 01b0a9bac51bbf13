// Weight format q3_k (GGUF Q3_K as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// super-blocks of 256, 3-bit codes q (2 low bits, a high bit), a 6-bit scale per 16 (stored
// plus 32) and fp16 d: w = d (s - 32) (q - 4).
#define CODE_BITS 2
const uint PLANE_HIGH_BITS = 1;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 3;
const bool PLANE_HALVES = true;
const uint PLANE_SUB_BLOCK = 16;
const int PLANE_CODE_OFFSET = -4;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 16 words per lane and chunk.
const bool PLANE_SCALE_WORD = false;
const bool PLANE_LANE_HALVES = true;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 16;
#include "planes.glsl"

// Scale j as stored: low four bits from byte j % 8 (its high nibble for j >= 8), top two from
// bits 2 (j / 4) of byte 8 + j % 4.
uint q3kScale(uint e, uint j) {
    const uint low = j < 8 ? recordByte(e, j) & 15u : recordByte(e, j - 8u) >> 4;
    return low | (((recordByte(e, 8u + (j & 3u)) >> ((j >> 2) << 1)) & 3u) << 4);
}
uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    const uint j = planeChunkInGroup(e);
    extras.w = planeHalfBits(e) | (q3kScale(e, 2u * j) << 16) | (q3kScale(e, 2u * j + 1u) << 24);
    return extras;
}
vec4 planeScaleMins(uvec4 extras) {
    const float d = unpackHalf2x16(extras.w).x;
    const float first = d * float(int((extras.w >> 16) & 0xffu) - 32);
    const float second = d * float(int(extras.w >> 24) - 32);
    return vec4(first, 0.0, second, 0.0);
}
