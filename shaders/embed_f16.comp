#version 450
// Embedding lookup from a f16 table.
#include "common.glsl"
#include "dequant_f16.glsl"
#include "embed_body.glsl"
