#version 450
// RMSNorm + gate and up projections + SwiGLU in one dispatch, int8_tensor weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int8_tensor.glsl"
#include "matvec_core.glsl"
#include "ffn_gateup_body.glsl"
