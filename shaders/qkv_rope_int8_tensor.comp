#version 450
// RMSNorm + QKV projection + bias + RoPE + KV-cache write in one dispatch, int8_tensor weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int8_tensor.glsl"
#include "matvec_core.glsl"
#include "qkv_rope_body.glsl"
