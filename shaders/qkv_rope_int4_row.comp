#version 450
// RMSNorm + QKV projection + bias + RoPE + KV-cache write in one dispatch, int4_row weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int4_row.glsl"
#include "matvec_core.glsl"
#include "qkv_rope_body.glsl"
