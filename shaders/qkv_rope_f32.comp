#version 450
// RMSNorm + QKV projection + bias + RoPE + KV-cache write in one dispatch, f32 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_f32.glsl"
#include "matvec_core.glsl"
#include "qkv_rope_body.glsl"
