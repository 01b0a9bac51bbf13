// Weight format F32: plain floats. Every format include defines the weight buffer at
// binding 0 and dequantize4(e): the four weights at element index e (a multiple of 4).
// Texels of four floats; see quant_codes.glsl for why a texel buffer.
layout(binding = 0) uniform samplerBuffer weightTexels;

vec4 dequantize4(uint e) { return texelFetch(weightTexels, int(e >> 2)); }
