// Weight format q5_k (GGUF Q5_K as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// as q4_k with 5-bit codes (a high bit each).
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 1;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 4;
const bool PLANE_HALVES = false;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 20 words per lane and chunk.
const bool PLANE_SCALE_WORD = true;
const bool PLANE_LANE_HALVES = false;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 20;
#include "planes.glsl"

// Byte k of the record of the group holding element e.
uint recordByte(uint e, uint k) { return (planeRecordWord(e, k >> 2) >> ((k & 3u) << 3)) & 0xffu; }

// Scale and min j (0..7) of the 12 packed bytes after d and dmin (as ggml packs them: bytes
// 0-3 / 4-7 the low six bits of scales / mins 0-3 and the top two bits of 4-7, bytes 8-11
// the low four bits of scale and min 4-7).
uvec2 kQuantScaleMin(uint e, uint j) {
    if (j < 4)
        return uvec2(recordByte(e, 4u + j) & 63u, recordByte(e, 8u + j) & 63u);
    const uint packed = recordByte(e, 8u + j);
    return uvec2((packed & 15u) | ((recordByte(e, j) >> 6) << 4),
                 (packed >> 4) | ((recordByte(e, 4u + j) >> 6) << 4));
}
uvec4 planeCanonicalExtras(uint e) {
    uvec4 extras = planeCanonicalHigh(e);
    extras.z = planeRecordWord(e, 0u);
    const uvec2 scaleMin = kQuantScaleMin(e, planeChunkInGroup(e));
    extras.w = (scaleMin.x | (scaleMin.y << 8)) << 16;
    return extras;
}
// w = d sc q - dmin m, sc and m the sub-block's 6-bit scale and min.
vec4 planeScaleMins(uvec4 extras) {
    const vec2 dm = unpackHalf2x16(extras.z);
    const float scale = dm.x * float((extras.w >> 16) & 0xffu);
    const float offset = -(dm.y * float(extras.w >> 24));
    return vec4(scale, offset, scale, offset);
}
