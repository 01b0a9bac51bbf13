// Weight format F16: IEEE half floats, read as 32-bit words (two halves each: on lavapipe a
// per-lane load is a gather, and 32-bit gathers move twice what 16-bit ones do).
layout(std430, binding = 0) readonly buffer Weights { uvec2 weightWords[]; };

vec4 dequantize4(uint e) {
    const uvec2 words = weightWords[e >> 2];
    return vec4(unpackHalf2x16(words.x), unpackHalf2x16(words.y));
}
