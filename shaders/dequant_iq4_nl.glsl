// Weight format iq4_nl (GGUF IQ4_NL as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// 4-bit indices into the IQ4_NL levels, w = d level[q], one fp16 d per block of 32.
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 0;
const uint PLANE_GROUP = 32;
const uint PLANE_RECORD_WORDS = 0;
const bool PLANE_HALVES = true;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = true;
// The lane-scale copy's fields (matvec_planes.glsl): 4 words per lane and chunk.
const bool PLANE_SCALE_WORD = false;
const bool PLANE_LANE_HALVES = true;
const bool PLANE_BYTE_PAIRS = false;
const uint PLANE_LANE_WORDS = 4;
#include "planes.glsl"

uvec4 planeCanonicalExtras(uint e) { return uvec4(0u, 0u, 0u, planeHalfBits(e)); }
vec4 planeScaleMins(uvec4 extras) {
    const float d = unpackHalf2x16(extras.w).x;
    return vec4(d, 0.0, d, 0.0);
}
