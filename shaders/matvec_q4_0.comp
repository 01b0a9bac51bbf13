#version 450
// Matrix-vector (decode) and register-tiled matrix-matrix (prefill) product, q4_0 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_q4_0.glsl"
#include "matvec_core.glsl"
#include "matvec_body.glsl"
