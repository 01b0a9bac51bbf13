#version 450
// Matrix-vector (decode) and register-tiled matrix-matrix (prefill) product, int8_tensor weights.
#include "common.glsl"
#include "matvec_params.glsl"
#include "dequant_int8_tensor.glsl"
#include "matvec_core.glsl"
#include "matvec_body.glsl"
