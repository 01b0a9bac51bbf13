// Shared by the quantized weight formats (layouts: compute/formats/GpuWeightPacking.hpp): the codes
// of every row first, in the device order of code_layout.glsl (the includer defines CODE_BITS),
// then the scales from word p.formatWords, addressed by the row-major element index
// e = row * wStride + col (matvec_params.glsl must be included before this file).
// A uniform texel buffer of four 32-bit words per texel: lavapipe gathers texels with vector
// loads, while it reads a storage buffer lane by lane (compute/vulkan/Pipeline.hpp), and it
// fetches a 16-byte texel per lane with plain loads where a 4-byte one takes a gather.
// The packers round every layout up to whole texels (packedMatrixSize).
layout(binding = 0) uniform usamplerBuffer weightTexels;
#include "code_layout.glsl"
uint weightWord(uint i) { return texelFetch(weightTexels, int(i >> 2))[i & 3u]; }
// Words i ... i + 3 (i a multiple of 4).
uvec4 weightWords4(uint i) { return texelFetch(weightTexels, int(i >> 2)); }

// The four signed bytes of a word, lowest first.
vec4 unpackBytes(uint word) {
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word)) >> 24);
}
// The four signed bytes of a word, each times 2^24 (kBytePlace undoes it): byte i moved to
// the top of the word, as a signed integer, exact in a float (8 significant bits).
vec4 unpackBytesInPlace(uint word) {
    return vec4(ivec4(uvec4(word << 24, word << 16, word << 8, word) & 0xff000000u));
}
const float kBytePlace = 1.0 / 16777216.0;
// The four signed bytes at code element c (a multiple of 4; codeElement).
vec4 int8Codes(uint c) { return unpackBytes(weightWord(c >> 2)); }
// The four 4-bit codes at code element c (a multiple of 4; codeElement): one half of a word,
// low nibble first.
uvec4 nibbleCodes(uint c) {
    const uint bits = weightWord(c >> 3) >> ((c & 4u) << 2);
    return (uvec4(bits) >> uvec4(0u, 4u, 8u, 12u)) & 0xfu;
}
// The eight 4-bit codes of a word, low nibble first.
void unpackNibbles(uint bits, out vec4 low, out vec4 high) {
    const uvec4 word = uvec4(bits);
    low = vec4((word >> uvec4(0u, 4u, 8u, 12u)) & 0xfu);
    high = vec4((word >> uvec4(16u, 20u, 24u, 28u)) & 0xfu);
}
// The eight 4-bit codes of a word, each left at its place in the word: code i times 16^i
// (the last one shifted down, as its place would not fit an int). A mask and a conversion
// per code, one operation fewer than shifting each down; the caller scales the activations
// by the inverse places (kNibblePlacesLow / High), powers of two, so every product is
// bit for bit code x activation (for activations above 2^-98, where no scaling underflows).
void unpackNibblesInPlace(uint bits, out vec4 low, out vec4 high) {
    const uvec4 word = uvec4(bits);
    low = vec4(ivec4(word & uvec4(0xfu, 0xf0u, 0xf00u, 0xf000u)));
    const uvec4 highMasks = uvec4(0xf0000u, 0xf00000u, 0xf000000u, 0xfu);
    high = vec4(ivec4(uvec4(word.xyz, word.w >> 28) & highMasks));
}
const vec4 kNibblePlacesLow = vec4(1.0, 1.0 / 16.0, 1.0 / 256.0, 1.0 / 4096.0);
const vec4 kNibblePlacesHigh = vec4(1.0 / 65536.0, 1.0 / 1048576.0, 1.0 / 16777216.0, 1.0);

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
