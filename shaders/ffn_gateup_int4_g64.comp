#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, int4_g64 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int4_g64.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
