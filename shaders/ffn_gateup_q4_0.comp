#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, q4_0 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_q4_0.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
