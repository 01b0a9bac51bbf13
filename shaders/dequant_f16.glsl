// Weight format F16: IEEE half floats, read as 32-bit words (two halves each: on lavapipe a
// per-lane load is a gather, and 32-bit gathers move twice what 16-bit ones do).
// Texels of two words (four halves); see quant_codes.glsl for why a texel buffer.
layout(binding = 0) uniform usamplerBuffer weightTexels;
#define CODE_BITS 16
#include "code_layout.glsl"

// e: the row-major element index (unused: no scales); c: the code element index.
vec4 dequantize4(uint e, uint c) {
    const uvec2 words = texelFetch(weightTexels, int(c >> 2)).xy;
    return vec4(unpackHalf2x16(words.x), unpackHalf2x16(words.y));
}
