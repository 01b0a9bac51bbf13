#version 450
// Matrix-vector (decode) and register-tiled matrix-matrix (prefill) product, int4_row weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int4_row.glsl"
#include "matvec_core.glsl"
#include "matvec_body.glsl"
