// Weight format F32: plain floats. Every format include defines the weight buffer at
// binding 0 and dequantize4(e): the four weights at element index e (a multiple of 4).
layout(std430, binding = 0) readonly buffer Weights { vec4 weights4[]; };

vec4 dequantize4(uint e) { return weights4[e >> 2]; }
