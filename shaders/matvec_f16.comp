#version 450
// Matrix-vector (decode) and register-tiled matrix-matrix (prefill) product, f16 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_f16.glsl"
#include "matvec_core.glsl"
#include "matvec_body.glsl"
