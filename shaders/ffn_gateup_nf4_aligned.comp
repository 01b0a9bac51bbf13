#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, nf4 weights
// in rows of a multiple of 64 (groups aligned to the broadcast path's chunks).
#define ALIGNED_GROUPS
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_nf4.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
