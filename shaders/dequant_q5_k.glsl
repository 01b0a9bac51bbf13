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
#include "kquant_scale_min.glsl"
