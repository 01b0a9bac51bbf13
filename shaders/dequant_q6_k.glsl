// Weight format q6_k (GGUF Q6_K as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// super-blocks of 256, 6-bit codes q (4 low bits, 2 high), an int8 scale per 16 and fp16 d:
// w = d sc (q - 32).
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 2;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 4;
const bool PLANE_HALVES = true;
const uint PLANE_SUB_BLOCK = 16;
const int PLANE_CODE_OFFSET = -32;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 24 words per lane and chunk.
const bool PLANE_SCALE_WORD = false;
const bool PLANE_LANE_HALVES = true;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 24;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    const uint j = planeChunkInGroup(e);
    extras.w = planeHalfBits(e) | (recordByte(e, 2u * j) << 16) | (recordByte(e, 2u * j + 1u) << 24);
    return extras;
}
vec4 planeScaleMins(uvec4 extras) {
    const float d = unpackHalf2x16(extras.w).x;
    const float first = d * float(bitfieldExtract(int(extras.w), 16, 8));
    const float second = d * float(bitfieldExtract(int(extras.w), 24, 8));
    return vec4(first, 0.0, second, 0.0);
}
