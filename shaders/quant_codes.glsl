// Shared by the quantized weight formats (layouts: compute/formats/GpuWeightPacking.hpp): the codes
// of every row first, at the padded element index e = row * wStride + col, then the scales
// from word p.formatWords (matvec_params.glsl must be included before this file). Weights are
// read as 32-bit words: on lavapipe every per-lane load is a gather, and narrower gathers
// move less per instruction.
// A uniform texel buffer of four 32-bit words per texel: lavapipe gathers texels with vector
// loads, while it reads a storage buffer lane by lane (compute/vulkan/Pipeline.hpp), and it
// fetches a 16-byte texel per lane with plain loads where a 4-byte one takes a gather.
// The packers round every layout up to whole texels (packedMatrixSize).
layout(binding = 0) uniform usamplerBuffer weightTexels;
uint weightWord(uint i) { return texelFetch(weightTexels, int(i >> 2))[i & 3u]; }
// Words i ... i + 3 (i a multiple of 4).
uvec4 weightWords4(uint i) { return texelFetch(weightTexels, int(i >> 2)); }

// The four signed bytes of a word, lowest first.
vec4 unpackBytes(uint word) {
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word)) >> 24);
}
// The four signed bytes at element e (a multiple of 4).
vec4 int8Codes(uint e) { return unpackBytes(weightWord(e >> 2)); }
// The four 4-bit codes at element e (a multiple of 4): one half of a word, low nibble first.
uvec4 nibbleCodes(uint e) {
    const uint bits = weightWord(e >> 3) >> ((e & 4u) << 2);
    return (uvec4(bits) >> uvec4(0u, 4u, 8u, 12u)) & 0xfu;
}
// The eight 4-bit codes of a word, low nibble first.
void unpackNibbles(uint bits, out vec4 low, out vec4 high) {
    const uvec4 word = uvec4(bits);
    low = vec4((word >> uvec4(0u, 4u, 8u, 12u)) & 0xfu);
    high = vec4((word >> uvec4(16u, 20u, 24u, 28u)) & 0xfu);
}
// The eight 4-bit codes of the word at element e (a multiple of 8).
void nibbleCodes8(uint e, out vec4 low, out vec4 high) {
    unpackNibbles(weightWord(e >> 3), low, high);
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
