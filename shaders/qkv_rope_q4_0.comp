#version 450
// RMSNorm + QKV projection + bias + RoPE + KV-cache write in one dispatch, q4_0 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_q4_0.glsl"
#include "matvec_core.glsl"
#include "qkv_rope_body.glsl"
