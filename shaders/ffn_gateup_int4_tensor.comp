#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, int4_tensor weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int4_tensor.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
