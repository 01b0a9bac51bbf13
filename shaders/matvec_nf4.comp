#version 450
// Matrix-vector (decode) and register-tiled matrix-matrix (prefill) product, nf4 weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_nf4.glsl"
#include "matvec_core.glsl"
#include "matvec_body.glsl"
