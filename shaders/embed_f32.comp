#version 450
// Embedding lookup from a f32 table.
#include "common.glsl"
#include "dequant_f32.glsl"
#include "embed_body.glsl"
