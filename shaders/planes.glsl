// Shared by the GGUF types in the planes layout (compute/formats/GgmlPlanes.hpp): Q5_0, Q5_1,
// IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS. The includer defines CODE_BITS (4 or 2) and
//   PLANE_HIGH_BITS (0, 1, 2)  high bits per weight in the high region;
//   PLANE_GROUP (32 or 256)    elements per record / half;
//   PLANE_RECORD_WORDS         words per group in the records region;
//   PLANE_HALVES               one fp16 per group after the records;
//   PLANE_SCALE_WORD, PLANE_BYTE_PAIRS, PLANE_LANE_WORDS: the fields of its lane-scale copy;
//   PLANE_CODEBOOK             codes index the IQ4_NL levels (else they are integers);
//   PLANE_CODE_OFFSET          an integer added to each code (Q5_0 -16, Q6_K -32, Q3_K -4);
// then defines, after this file, planeCanonicalExtras and planeScaleMins (below).
//
// What a slot needs for a chunk of 32 columns besides its codes, its "extras", is one uvec4:
// x, y the chunk's high-bit words; z the scale word (Q5_1: d, m; Q4_K, Q5_K, Q2_K: d, dmin);
// w an fp16 d in the low half and the chunk's two sub-block scale bytes above it. The kernels
// take it from the lane-scale copy (matvec_planes.glsl) or from the packed layout here.
#include "quant_codes.glsl"

#define WEIGHT_PLANES
// The matrix may carry its extras in a lane's slot order (matvec_core.glsl).
#define LANE_SCALE_LAYOUT

// Extras of the chunk starting at row-major element e (a multiple of 32), from the packed
// layout; and the scale and offset of its two halves (columns 0-15 and 16-31): value =
// scale * (code + PLANE_CODE_OFFSET) + offset, as (scale0, offset0, scale1, offset1), the
// same operations in the same order as the host decoder (models/formats/TensorType.cpp), so
// a weight alone comes out bit for bit the host's.
uvec4 planeCanonicalExtras(uint e);
vec4 planeScaleMins(uvec4 extras);

// The regions after the codes (GgmlPlanes.hpp): high words, records, halves. p.rows is the
// matrix's (chunk's) stored rows, so the sizes follow from the push constants.
uint planeHighWord(uint e, uint index) {
    return weightWord(p.formatWords + (e >> 5) * PLANE_HIGH_BITS + index);
}
uint planeGroups() { return p.rows * p.wStride / PLANE_GROUP; }
uint planeRecordBase() { return p.formatWords + ((p.rows * p.wStride * PLANE_HIGH_BITS) >> 5); }
uint planeRecordWord(uint e, uint index) {
    return weightWord(planeRecordBase() + (e / PLANE_GROUP) * PLANE_RECORD_WORDS + index);
}
// Byte k of the record of the group holding element e.
uint recordByte(uint e, uint k) { return (planeRecordWord(e, k >> 2) >> ((k & 3u) << 3)) & 0xffu; }
uint planeHalfBits(uint e) {
    const uint group = e / PLANE_GROUP;
    const uint word = weightWord(planeRecordBase() + planeGroups() * PLANE_RECORD_WORDS + (group >> 1));
    return (word >> ((group & 1u) << 4)) & 0xffffu;
}
// The chunk's index within its super-block (0 for groups of 32).
uint planeChunkInGroup(uint e) { return (e % PLANE_GROUP) >> 5; }
// The high words of the chunk at e, in x and y.
uvec4 planeCanonicalHigh(uint e) {
    uvec4 extras = uvec4(0u);
    if (PLANE_HIGH_BITS >= 1) extras.x = planeHighWord(e, 0u);
    if (PLANE_HIGH_BITS >= 2) extras.y = planeHighWord(e, 1u);
    return extras;
}

// The word of the texel holding the codes of the chunk at code element c (codeElement of its
// first column), and for 2-bit codes which half of that texel (a texel holds 64 of them).
uint planeCodeTexelWord(uint c) { return (c >> (CODE_BITS == 4 ? 3u : 4u)) & ~3u; }
uint planeCodeHalf(uint c) { return CODE_BITS == 2 ? (c >> 5) & 1u : 0u; }

// Byte places of the in-place codes: code b of a lane group sits at 256^b (2^-8 b undoes it).
const vec4 kPlaneBytePlaces = vec4(1.0, 1.0 / 256.0, 1.0 / 65536.0, 1.0 / 16777216.0);
// 4-bit codes without high bits are left in place in their word: lane groups 0-3 are the low
// nibbles of bytes 0-3 (places 16^0, 16^2, 16^4, 16^6), groups 4-7 the high nibbles (16^1,
// 16^3, 16^5, and the last shifted down to 1).
const bool PLANE_NIBBLES_IN_PLACE = CODE_BITS == 4 && PLANE_HIGH_BITS == 0 && !PLANE_CODEBOOK;
const vec4 kPlaneHighNibblePlaces = vec4(1.0 / 16.0, 1.0 / 4096.0, 1.0 / 1048576.0, 1.0);
vec4 planePlaces(uint lane) {
    if (PLANE_CODEBOOK) return vec4(1.0);
    return PLANE_NIBBLES_IN_PLACE && lane >= 4 ? kPlaneHighNibblePlaces : kPlaneBytePlaces;
}
// PLANE_CODE_OFFSET at the codes' places (exact: powers of two).
vec4 planeOffsetPlaced(uint lane) { return float(PLANE_CODE_OFFSET) / planePlaces(lane); }

// IQ4_NL's levels (-127 ... 113) from the 4-bit index q: the least-squares quartic through the
// 16 levels misses none by more than 0.48, so rounding it gives each level exactly (the
// kernel test compares every weight with the host's table).
vec4 planeCodebook(vec4 q) {
    const vec4 poly = (((1.3247201714693974e-3 * q + 4.1216824111560954e-2) * q -
                        1.5001835754544732) * q + 24.74324574634172) * q - 127.04360165118679;
    return roundEven(poly);
}

// The codes of lane group `lane` (its 4 columns) of a slot's chunk, as floats: in place (times
// planePlaces(lane)) for integer codes, the levels for a codebook. words: the slot's code
// texel; extras: its extras.
vec4 planeLaneCodes(uvec4 words, uvec4 extras, uint half_, uint lane) {
    if (PLANE_NIBBLES_IN_PLACE) {
        const uvec4 w = uvec4(words[lane & 3u]);
        if (lane < 4)
            return vec4(ivec4(w & uvec4(0xfu, 0xf00u, 0xf0000u, 0xf000000u)));
        return vec4(ivec4(uvec4(w.xyz & uvec3(0xf0u, 0xf000u, 0xf00000u), w.w >> 28)));
    }
    uint bytes;
    if (CODE_BITS == 4) {
        bytes = (words[lane & 3u] >> ((lane >> 2) << 2)) & 0x0f0f0f0fu;
    } else {
        const uint word = half_ == 0u ? words[lane >> 2] : words[2u + (lane >> 2)];
        bytes = (word >> ((lane & 3u) << 1)) & 0x03030303u;
    }
    if (PLANE_CODEBOOK)
        return planeCodebook(vec4((uvec4(bytes) >> uvec4(0u, 8u, 16u, 24u)) & 0xfu));
    // High bits: lane group L's sit at bit 8 b + L (Q6_K: word L / 4, bits 8 b + 2 (L % 4));
    // shifted to just above the low bits of each byte.
    if (PLANE_HIGH_BITS == 1) {
        const uint top = CODE_BITS == 4 ? 4u : 2u;
        const uint mask = CODE_BITS == 4 ? 0x10101010u : 0x04040404u;
        bytes |= (lane <= top ? extras.x << (top - lane) : extras.x >> (lane - top)) & mask;
    } else if (PLANE_HIGH_BITS == 2) {
        const uint word = lane < 4 ? extras.x : extras.y;
        const uint at = (lane & 3u) << 1;
        bytes |= (at <= 4u ? word << (4u - at) : word >> (at - 4u)) & 0x30303030u;
    }
    return vec4(ivec4(uvec4(bytes) & uvec4(0xffu, 0xff00u, 0xff0000u, 0xff000000u)));
}

// Element-wise path (GPUs' split columns, and any workgroup width but 8): the four weights at
// row-major element e (a multiple of 4) and code element c.
vec4 dequantize4(uint e, uint c) {
    const uint chunkStart = e & ~31u, lane = (e & 31u) >> 2;
    const uvec4 extras = planeCanonicalExtras(chunkStart);
    const vec4 codes = planeLaneCodes(weightWords4(planeCodeTexelWord(c)), extras,
                                      planeCodeHalf(c), lane) +
                       planeOffsetPlaced(lane);
    const vec4 scaleMins = planeScaleMins(extras);
    const vec2 scaleMin = lane < 4 ? scaleMins.xy : scaleMins.zw;
    return codes * (scaleMin.x * planePlaces(lane)) + scaleMin.y;
}
