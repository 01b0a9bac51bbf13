// Shared by the quantized weight formats (layouts: compute/formats/GpuWeightPacking.hpp): the codes
// of every row first, at the padded element index e = row * wStride + col, then the scales
// from word p.formatWords (matvec_params.glsl must be included before this file). Weights are
// read as 32-bit words: on lavapipe every per-lane load is a gather, and narrower gathers
// move less per instruction.
// Uniform texel buffer of 32-bit words: lavapipe gathers texels with vector loads, while it
// reads a storage buffer lane by lane (compute/vulkan/Pipeline.hpp).
layout(binding = 0) uniform usamplerBuffer weightTexels;
uint weightWord(uint i) { return texelFetch(weightTexels, int(i)).x; }

// The four signed bytes at element e (a multiple of 4).
vec4 int8Codes(uint e) {
    const uint word = weightWord(e >> 2);
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word)) >> 24);
}
// The four 4-bit codes at element e (a multiple of 4): one half of a word, low nibble first.
uvec4 nibbleCodes(uint e) {
    const uint bits = weightWord(e >> 3) >> ((e & 4u) << 2);
    return (uvec4(bits) >> uvec4(0u, 4u, 8u, 12u)) & 0xfu;
}
// The eight 4-bit codes of the word at element e (a multiple of 8), low nibble first.
void nibbleCodes8(uint e, out vec4 low, out vec4 high) {
    const uvec4 word = uvec4(weightWord(e >> 3));
    low = vec4((word >> uvec4(0u, 4u, 8u, 12u)) & 0xfu);
    high = vec4((word >> uvec4(16u, 20u, 24u, 28u)) & 0xfu);
}
// The index-th fp16 of the scale region (two per word, low half first).
float scaleHalf(uint index) {
    return unpackHalf2x16(weightWord(p.formatWords + (index >> 1)) >> ((index & 1u) << 4)).x;
}
// The host layouts number elements without the row padding (groups may cross rows). The
// branch is uniform over the dispatch: matrices whose rows need no padding (every real
// model's) take the first return and never divide.
uint logicalIndex(uint e) {
    if (p.cols == p.wStride) return e;
    const uint row = e / p.wStride;
    return e - row * (p.wStride - p.cols);
}
