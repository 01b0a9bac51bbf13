#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, q4_1 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_q4_1.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
