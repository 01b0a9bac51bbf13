// Weight format F32: plain floats. Every format include defines the weight buffer at
// binding 0 and dequantize4(e): the four weights at element index e (a multiple of 4).
// Texels of four floats; see quant_codes.glsl for why a texel buffer.
layout(binding = 0) uniform samplerBuffer weightTexels;
#define CODE_BITS 32
#include "code_layout.glsl"

// e: the row-major element index (unused: no scales); c: the code element index.
vec4 dequantize4(uint e, uint c) { return texelFetch(weightTexels, int(c >> 2)); }
