#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, int4_row weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int4_row.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
