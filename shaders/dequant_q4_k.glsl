// Weight format q4_k (GGUF Q4_K as stored, planes layout: compute/formats/GgmlPlanes.hpp):
// super-blocks of 256 with fp16 d and dmin and 6-bit scales and mins per 32, 4-bit codes.
#define CODE_BITS 4
const uint PLANE_HIGH_BITS = 0;
const uint PLANE_GROUP = 256;
const uint PLANE_RECORD_WORDS = 4;
const bool PLANE_HALVES = false;
const uint PLANE_SUB_BLOCK = 32;
const int PLANE_CODE_OFFSET = 0;
const bool PLANE_CODEBOOK = false;
// The lane-scale copy's fields (matvec_planes.glsl): 12 words per lane and chunk.
const bool PLANE_SCALE_WORD = true;
const bool PLANE_LANE_HALVES = false;
const bool PLANE_BYTE_PAIRS = true;
const uint PLANE_LANE_WORDS = 12;
#include "planes.glsl"
#include "kquant_scale_min.glsl"
