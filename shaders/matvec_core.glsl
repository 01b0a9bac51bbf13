// The inner product loop shared by every matrix-vector / matrix-matrix kernel. The includer
// has already included common.glsl, a dequant_<format>.glsl and matvec_params.glsl, and
// defines `uint weightRow(uint slot)`: the weight row of this workgroup's slot (clamped to
// a valid row), and `uint rowGroup()`: which ROWS_PER_WG slots this workgroup computes
// (gl_WorkGroupID.x, or an order of its own). A workgroup computes ROWS_PER_WG rows for
// TOKENS tokens.
//
// Two layouts, picked by specialization from the device's properties:
//  SPLIT_COLUMNS: the lanes stride along each row and sum with a workgroup reduction at the
//    end (GPUs: coalesced loads across lanes);
//  otherwise each lane owns SLOTS rows and streams them alone, with no reduction at all
//    (lavapipe: a lane is a SIMD element, long sequential loops per lane are cheap and
//    reductions are not).
// The optional RMSNorm prologue is folded in: x is multiplied by the norm weight on the fly
// and the sum of squares accumulates in the same loop; the scale applies at the end.
// Per-format inner loops of the broadcast path: WEIGHT_NIBBLES and WEIGHT_BYTES below, and
// WEIGHT_PLANES (the GGUF types of compute/formats/GgmlPlanes.hpp) in matvec_planes.glsl.
layout(constant_id = 2) const uint SLOTS = 2;  // rows per lane (row layout) or per workgroup
layout(constant_id = 3) const uint TOKENS = 1; // input rows per workgroup
layout(constant_id = 4) const bool NORM = false;
layout(constant_id = 5) const bool SPLIT_COLUMNS = false;
// Row layout only, one subgroup per workgroup: each lane loads a different slice of x and
// the lanes pass the slices around with subgroupShuffle, instead of every lane loading the
// same x (on lavapipe every per-lane load is a gather, shuffles are register permutes).
// Needs rows padded to a multiple of 4 * WG columns.
layout(constant_id = 12) const bool BROADCAST_X = false;
// Broadcast path, 4-bit formats, 8 lanes: the activations are rounded to 8 bits per chunk
// of 32 columns (as llama.cpp's CPU backend does, its q8_1) and the products are integer,
// two per 32-bit multiply (nibbleChunkInt8). The kernels compute then exactly
// sum_j w_j * xhat_j, xhat the rounded activations (compute/formats/ActivationRounding.hpp).
layout(constant_id = 14) const bool INT8_ACTIVATIONS = false;
// Float nibble path: from this many tokens per workgroup on, codes are dequantized before
// the products (broadcastChunk); below, the scale applies once per chunk and row. A
// batch-invariant engine sets it past every tile, so a row rounds alike in any batch.
layout(constant_id = 15) const uint PRESCALE_TOKENS = 8;

// The input rows and the norm weight are texel buffers of vec4 (see quant_codes.glsl).
layout(binding = 1) uniform samplerBuffer inputTexels;
layout(binding = 3) uniform samplerBuffer normTexels;
vec4 x4(uint i) { return texelFetch(inputTexels, int(i)); }
vec4 normWeight4(uint i) { return texelFetch(normTexels, int(i)); }

const uint ROWS_PER_WG = SPLIT_COLUMNS ? SLOTS : SLOTS * WG;

uint weightRow(uint slot);
uint inputRow(uint token);
uint rowGroup();

float dots[SLOTS][TOKENS];
float normScale[TOKENS];

// Slot index (within the whole dispatch) of this lane's s-th row. Row layout: slots 2k and
// 2k + 1 of a lane are neighbours (the pair kernels keep a pair in one lane), and for a
// given s the lanes take neighbouring slots, so that their loads land close together.
uint slotOf(uint s) {
    const uint lane = gl_LocalInvocationID.x;
    const uint inGroup = SPLIT_COLUMNS ? s
                         : (SLOTS % 2 == 0 ? (s / 2) * 2 * WG + 2 * lane + (s & 1) : s * WG + lane);
    return rowGroup() * ROWS_PER_WG + inGroup;
}
uint tokenOf(uint c) { return min(gl_WorkGroupID.y * TOKENS + c, p.tokens - 1); }
// Whether this lane writes the results of its slots (one writer per row).
bool laneWrites() { return !SPLIT_COLUMNS || gl_LocalInvocationID.x == 0; }

#ifdef ROW_SCALES
float slotScales[SLOTS]; // one scale per row (per-row and per-tensor formats), loaded once
#endif
#ifdef SCALE_WORD_PAIRS
// q4_1 with one block per chunk: each slot's scale texel, fetched by the first of the two
// chunks whose scale words it holds (broadcastChunk).
const bool SCALE_PAIRS = WG * 4 == WEIGHT_BLOCK;
uvec4 scaleTexels[SLOTS];
#else
const bool SCALE_PAIRS = false;
#endif
#if defined(WEIGHT_BLOCK) && !defined(ROW_SCALES)
// Blocks of a multiple of two chunks (int4 groups and nf4 on rows of a multiple of 64
// weights): both chunks of a pair (2 x WG x 4 columns at a multiple of that) lie in one
// block, so the first loads the scale of each slot and the second reuses it. For int4-g128
// that was one scale fetch per code fetch, half of the weight fetches of a decode step.
const bool PAIR_IN_BLOCK = WEIGHT_BLOCK % (8 * WG) == 0;
#ifdef WEIGHT_NIBBLES
vec2 pairScaleMins[SLOTS];
#else
float pairScales[SLOTS];
#endif
#else
const bool PAIR_IN_BLOCK = false;
#endif
#ifdef LANE_SCALE_LAYOUT
// Int4 groups and q4_1 on 8 lanes x 8 slots (compute/formats/LaneScaleLayout.hpp): a copy of
// the scales from word p.laneScaleWords in which one texel holds the scales of a lane's 8
// slots for a block of 64 columns (q4_1: two texels their d and m words for a chunk), so a
// chunk costs one scale fetch (q4_1: two) instead of one per slot (q4_1: per two slots). The
// chunks then go one per loop turn, each fetching its block's texel (on lavapipe two-chunk
// turns cost more than the second fetch they save).
layout(constant_id = 16) const bool LANE_SCALES = false;
#else
const bool LANE_SCALES = false;
#endif
// The scale (and offset) of the chunk of slot s at row-major element e: per-row formats take
// the slot's loaded scale (a division and a fetch per chunk otherwise, both lane by lane on
// lavapipe), q4_1 its pair's texel, blocks of whole chunk pairs the pair's scale, the others
// their block's.
#ifdef WEIGHT_NIBBLES
vec2 chunkScaleMin(uint s, uint e) {
#ifdef ROW_SCALES
    return scaleMinOf(slotScales[s]);
#else
#ifdef LANE_SCALE_LAYOUT
    if (LANE_SCALES) return pairScaleMins[s];
#endif
#ifdef SCALE_WORD_PAIRS
    if (SCALE_PAIRS) return unpackHalf2x16(scaleTexels[s][scaleWordIndex(e) & 3u]);
#endif
    if (PAIR_IN_BLOCK) return pairScaleMins[s];
    return weightScaleMin(e);
#endif
}
#endif
#if defined(WEIGHT_BLOCK) && !defined(WEIGHT_NIBBLES)
float chunkScale(uint s, uint e) {
#ifdef ROW_SCALES
    return slotScales[s];
#else
    if (PAIR_IN_BLOCK) return pairScales[s];
    return weightScale(e);
#endif
}
#endif
// Loads what the chunks of a pair share (fetchScales: the first chunk of a pair, or every
// chunk where chunks are not paired).
void loadPairScales(uint i0, uint wBase[SLOTS], bool fetchScales) {
#ifdef SCALE_WORD_PAIRS
    if (SCALE_PAIRS && fetchScales && !LANE_SCALES) {
        [[unroll]] for (uint s = 0; s < SLOTS; ++s)
            scaleTexels[s] = weightWords4(scaleWordIndex(wBase[s] + i0 * 4) & ~3u);
    }
#endif
#if defined(LANE_SCALE_LAYOUT) && !defined(WEIGHT_PLANES)
    if (LANE_SCALES && WG == 8 && SLOTS == 8) {
#ifdef LANE_SCALE_WORDS
        // One (d, m) word per slot and chunk of 32 columns: two texels per lane and chunk.
        const uint chunk = rowGroup() * (p.wStride >> 5) + (i0 >> 3); // i0: in columns / 4
        const uint base = p.laneScaleWords + (chunk * WG + gl_LocalInvocationID.x) * 8;
        const uvec4 low = weightWords4(base), high = weightWords4(base + 4);
        [[unroll]] for (uint s = 0; s < 4; ++s) {
            pairScaleMins[s] = unpackHalf2x16(low[s]);
            pairScaleMins[s + 4] = unpackHalf2x16(high[s]);
        }
#else
        const uint block = rowGroup() * (p.wStride >> 6) + (i0 >> 4); // i0: in columns / 4
        const uvec4 texel = weightWords4(p.laneScaleWords + (block * WG + gl_LocalInvocationID.x) * 4);
        [[unroll]] for (uint s = 0; s < SLOTS; ++s)
            pairScaleMins[s] = scaleMinOf(unpackHalf2x16(texel[s >> 1])[s & 1]);
#endif
        return;
    }
#endif
#if defined(WEIGHT_BLOCK) && !defined(ROW_SCALES)
    if (PAIR_IN_BLOCK && fetchScales) {
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
#ifdef WEIGHT_NIBBLES
            pairScaleMins[s] = weightScaleMin(wBase[s] + i0 * 4);
#else
            pairScales[s] = weightScale(wBase[s] + i0 * 4);
#endif
        }
    }
#endif
}

#ifdef WEIGHT_PLANES
#include "matvec_planes.glsl"
#endif

#ifdef WEIGHT_NIBBLES
// One chunk of 32 columns (8 lanes x 4) of every slot's row with 8-bit activations.
// Each lane rounds its 4 activations to xq = roundEven(x * 127 / amax), amax over the chunk,
// and keeps u = xq + 128 (1 ... 255). A word of 8 codes c0 ... c7 (4 bits each) is masked
// into four words (c_a + c_b << 16) for the pairs (a, b) = (0, 4), (1, 5), (2, 6), (3, 7);
// multiplied by (u_b + u_a << 16), the upper half holds c_a u_a + c_b u_b and the lower
// half c_a u_b < 2^12, so four such products sum without a carry between the halves.
// sum c xq = sum c u - 128 sum c, and sum_j (d c_j + m) xhat_j = dx (d sum c xq + m sum xq).
void nibbleChunkInt8(uint i0, vec4 xs[TOKENS], uint wBase[SLOTS], uint cBase[SLOTS]) {
    const uint lane = gl_LocalInvocationID.x;
    uvec4 pairs[TOKENS];
    float xScale[TOKENS];
    int xqSum[TOKENS];
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        const vec4 ax = abs(xs[c]);
        const float amax = subgroupMax(max(max(ax.x, ax.y), max(ax.z, ax.w)));
        xScale[c] = amax / 127.0;
        const ivec4 xq = ivec4(roundEven(xs[c] * (amax > 0.0 ? 127.0 / amax : 0.0)));
        xqSum[c] = subgroupAdd(xq.x + xq.y + xq.z + xq.w);
        // Lane 2k holds columns 0-3 of word k (the upper halves), lane 2k + 1 columns 4-7.
        const uvec4 mine = uvec4(xq + 128) << ((lane & 1u) == 0u ? 16u : 0u);
        pairs[c] = mine | subgroupShuffleXor(mine, 1u);
    }
    uvec4 wordPairs[4][TOKENS];
    [[unroll]] for (uint k = 0; k < 4; ++k)
        [[unroll]] for (uint c = 0; c < TOKENS; ++c)
            wordPairs[k][c] = subgroupShuffle(pairs[c], 2 * k);
    uvec4 words[SLOTS];
    [[unroll]] for (uint s = 0; s < SLOTS; ++s)
        words[s] = weightWords4(codeElement(cBase[s], i0 * 4) >> 3);
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        int codeDots[TOKENS];
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) codeDots[c] = 0;
        uint codeBytes = 0u; // byte sums of the codes: at most 4 words x 2 x 15 per byte
        [[unroll]] for (uint k = 0; k < 4; ++k) {
            const uint low = words[s][k] & 0x0f0f0f0fu;
            const uint high = (words[s][k] >> 4) & 0x0f0f0f0fu;
            codeBytes += low + high;
            const uint p04 = low & 0x00ff00ffu, p26 = (low >> 8) & 0x00ff00ffu;
            const uint p15 = high & 0x00ff00ffu, p37 = (high >> 8) & 0x00ff00ffu;
            [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
                const uvec4 u = wordPairs[k][c];
                codeDots[c] += int((p04 * u.x + p15 * u.y + p26 * u.z + p37 * u.w) >> 16);
            }
        }
        const uint halves = (codeBytes & 0x00ff00ffu) + ((codeBytes >> 8) & 0x00ff00ffu);
        const int codeSum = int((halves & 0xffffu) + (halves >> 16));
        const vec2 scaleMin = chunkScaleMin(s, wBase[s] + i0 * 4);
        [[unroll]] for (uint c = 0; c < TOKENS; ++c)
            dots[s][c] += xScale[c] * (scaleMin.x * float(codeDots[c] - 128 * codeSum) +
                                       scaleMin.y * float(xqSum[c]));
    }
}
#endif

// One chunk of WG x 4 columns of the broadcast path. fetchScales: load the scales the next
// chunk shares (loadPairScales).
void broadcastChunk(uint i0, uint wBase[SLOTS], uint cBase[SLOTS], uint xBase[TOKENS],
                    inout float sumSquares[TOKENS], bool fetchScales) {
    const uint lane = gl_LocalInvocationID.x;
    loadPairScales(i0, wBase, fetchScales);
    vec4 xs[TOKENS];
    const vec4 nw = NORM ? normWeight4(i0 + lane) : vec4(1.0);
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        xs[c] = x4(xBase[c] + i0 + lane);
        if (NORM) {
            sumSquares[c] += dot(xs[c], xs[c]);
            xs[c] *= nw;
        }
    }
#ifdef WEIGHT_PLANES
    if (WG == 8) {
        planesChunk(i0, xs, wBase, cBase);
        return;
    }
#endif
#ifdef WEIGHT_NIBBLES
    if (WEIGHT_BLOCK % (WG * 4) == 0 && WG % 2 == 0) {
        // 4-bit codes, a chunk inside one block: each word is loaded once and unpacked
        // into 8 codes, and the block's scale d and offset m apply once per row and
        // chunk: sum_k (q_k d + m) x_k = d * sum_k q_k x_k + m * sum_k x_k.
        if (INT8_ACTIVATIONS && WG == 8) {
            nibbleChunkInt8(i0, xs, wBase, cBase);
            return;
        }
        // Tiles of many tokens dequantize each code (w = q d + m, one fma) and add into
        // dots directly: a second SLOTS x TOKENS array of per-chunk code sums, and a
        // reduction per token and chunk, cost more there than the fma per code does.
        const bool dequantizeCodes = TOKENS >= PRESCALE_TOKENS;
        vec2 scaleMins[SLOTS];
        float codeDots[SLOTS][TOKENS];
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
            scaleMins[s] = dequantizeCodes ? chunkScaleMin(s, wBase[s] + i0 * 4) : vec2(0.0);
            [[unroll]] for (uint c = 0; c < TOKENS; ++c) codeDots[s][c] = 0.0;
        }
        // Four words (32 codes) per fetch where the lanes cover them (WG % 8 == 0):
        // the words of a row chunk start at a multiple of 4 (rows are padded to 64).
        const uint wordsPerFetch = WG % 8 == 0 ? 4 : 1;
        [[unroll]] for (uint j = 0; j < WG; j += 2 * wordsPerFetch) {
            uvec4 words[SLOTS];
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                const uint word = codeElement(cBase[s], (i0 + j) * 4) >> 3;
                words[s] =
                    wordsPerFetch == 4 ? weightWords4(word) : uvec4(weightWord(word));
            }
            [[unroll]] for (uint k = 0; k < wordsPerFetch; ++k) {
                vec4 low[SLOTS];
                vec4 high[SLOTS];
                [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                    if (dequantizeCodes)
                        unpackNibbles(words[s][k], low[s], high[s]);
                    else
                        unpackNibblesInPlace(words[s][k], low[s], high[s]);
                    if (dequantizeCodes) {
                        low[s] = low[s] * scaleMins[s].x + scaleMins[s].y;
                        high[s] = high[s] * scaleMins[s].x + scaleMins[s].y;
                    }
                }
                [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
                    vec4 xLow = subgroupShuffle(xs[c], j + 2 * k);
                    vec4 xHigh = subgroupShuffle(xs[c], j + 2 * k + 1);
                    if (!dequantizeCodes) {
                        xLow *= kNibblePlacesLow;
                        xHigh *= kNibblePlacesHigh;
                    }
                    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                        const float chunkDot = dot(low[s], xLow) + dot(high[s], xHigh);
                        if (dequantizeCodes)
                            dots[s][c] += chunkDot;
                        else
                            codeDots[s][c] += chunkDot;
                    }
                }
            }
        }
        if (dequantizeCodes) return;
        float chunkSum[TOKENS];
        [[unroll]] for (uint c = 0; c < TOKENS; ++c)
            chunkSum[c] = subgroupAdd(dot(xs[c], vec4(1.0)));
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
            const vec2 scaleMin = chunkScaleMin(s, wBase[s] + i0 * 4);
            [[unroll]] for (uint c = 0; c < TOKENS; ++c)
                dots[s][c] += scaleMin.x * codeDots[s][c] + scaleMin.y * chunkSum[c];
        }
        return;
    }
#endif
#if defined(WEIGHT_BLOCK) && !defined(WEIGHT_NIBBLES)
    // A chunk of WG x 4 columns lies inside one block when WG * 4 divides the block
    // size: one scale load per row and chunk.
    const bool oneBlock = WEIGHT_BLOCK % (WG * 4) == 0;
    float blockScale[SLOTS];
    [[unroll]] for (uint s = 0; s < SLOTS; ++s)
        blockScale[s] = chunkScale(s, wBase[s] + i0 * 4);
#endif
#ifdef WEIGHT_BYTES
    // 8-bit codes inside one block: four words (16 codes) per fetch (see the nibble
    // path); the words of a row chunk start at a multiple of 4 (rows are padded to 64).
    // Codes stay at their place in the word (unpackBytesInPlace: byte i times 2^24, a mask
    // or a shift each where sign extension takes two), so the activations or the scale
    // carry the 2^-24 (a power of two: the products are bit for bit code x activation).
    // Below PRESCALE_TOKENS tokens (decode) the block scale applies once per chunk and row,
    // to the sum of code x activation (as the nibble path); from there on (prompts, large
    // batches) each code is scaled, which keeps no second SLOTS x TOKENS array of sums.
    if (oneBlock && WG % 4 == 0) {
        const bool scaleCodes = TOKENS >= PRESCALE_TOKENS;
        float codeDots[SLOTS][TOKENS];
        [[unroll]] for (uint s = 0; s < SLOTS; ++s)
            [[unroll]] for (uint c = 0; c < TOKENS; ++c) codeDots[s][c] = 0.0;
        [[unroll]] for (uint j = 0; j < WG; j += 4) {
            uvec4 words[SLOTS];
            [[unroll]] for (uint s = 0; s < SLOTS; ++s)
                words[s] = weightWords4(codeElement(cBase[s], (i0 + j) * 4) >> 2);
            [[unroll]] for (uint k = 0; k < 4; ++k) {
                vec4 w[SLOTS];
                [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                    w[s] = unpackBytesInPlace(words[s][k]);
                    if (scaleCodes) w[s] *= blockScale[s] * kBytePlace;
                }
                [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
                    vec4 x = subgroupShuffle(xs[c], j + k);
                    if (!scaleCodes) x *= kBytePlace;
                    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
                        if (scaleCodes)
                            dots[s][c] += dot(w[s], x);
                        else
                            codeDots[s][c] += dot(w[s], x);
                    }
                }
            }
        }
        if (!scaleCodes) {
            [[unroll]] for (uint s = 0; s < SLOTS; ++s)
                [[unroll]] for (uint c = 0; c < TOKENS; ++c)
                    dots[s][c] += blockScale[s] * codeDots[s][c];
        }
        return;
    }
#endif
    [[unroll]] for (uint j = 0; j < WG; ++j) {
        vec4 w[SLOTS];
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
#if defined(WEIGHT_BLOCK) && !defined(WEIGHT_NIBBLES)
            const uint c = codeElement(cBase[s], (i0 + j) * 4);
            w[s] = oneBlock ? weightQuants(c) * blockScale[s]
                            : dequantize4(wBase[s] + (i0 + j) * 4, c);
#else
            w[s] = dequantize4(wBase[s] + (i0 + j) * 4, codeElement(cBase[s], (i0 + j) * 4));
#endif
        }
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            const vec4 x = subgroupShuffle(xs[c], j);
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) dots[s][c] += dot(w[s], x);
        }
    }
}

void matvecCore() {
    // wBase: the row-major element index of each row (scales); cBase: its codes' base in
    // the device order (code_layout.glsl).
    uint wBase[SLOTS];
    uint cBase[SLOTS];
    [[unroll]] for (uint s = 0; s < SLOTS; ++s) {
        const uint row = weightRow(slotOf(s));
        wBase[s] = row * p.wStride;
        cBase[s] = codeRowBase(row, p.wStride);
#ifdef ROW_SCALES
        slotScales[s] = rowScale(row);
#endif
    }
    uint xBase[TOKENS];
    float sumSquares[TOKENS];
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        xBase[c] = inputRow(tokenOf(c)) * (p.xStride >> 2);
        sumSquares[c] = 0.0;
        [[unroll]] for (uint s = 0; s < SLOTS; ++s) dots[s][c] = 0.0;
    }
    const uint vecs = p.wStride >> 2;
    if (BROADCAST_X && !SPLIT_COLUMNS) {
        if ((SCALE_PAIRS || PAIR_IN_BLOCK) && !LANE_SCALES) {
            // Two chunks per turn, the scales loaded once for both (rows are padded to 64
            // columns, a multiple of two chunks in both cases).
            for (uint i0 = 0; i0 < vecs; i0 += 2 * WG) {
                broadcastChunk(i0, wBase, cBase, xBase, sumSquares, true);
                broadcastChunk(i0 + WG, wBase, cBase, xBase, sumSquares, false);
            }
        } else
        for (uint i0 = 0; i0 < vecs; i0 += WG)
            broadcastChunk(i0, wBase, cBase, xBase, sumSquares, true);
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            if (NORM) sumSquares[c] = subgroupAdd(sumSquares[c]);
            normScale[c] = NORM ? inversesqrt(sumSquares[c] / float(p.cols) + p.eps) : 1.0;
        }
        return;
    }
    const uint start = SPLIT_COLUMNS ? gl_LocalInvocationID.x : 0;
    const uint step = SPLIT_COLUMNS ? WG : 1;
    for (uint i = start; i < vecs; i += step) {
        vec4 w[SLOTS];
        [[unroll]] for (uint s = 0; s < SLOTS; ++s)
            w[s] = dequantize4(wBase[s] + i * 4, codeElement(cBase[s], i * 4));
        vec4 nw = NORM ? normWeight4(i) : vec4(1.0);
        [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
            vec4 x = x4(xBase[c] + i);
            if (NORM) {
                sumSquares[c] += dot(x, x);
                x *= nw;
            }
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) dots[s][c] += dot(w[s], x);
        }
    }
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        if (SPLIT_COLUMNS) {
            [[unroll]] for (uint s = 0; s < SLOTS; ++s) dots[s][c] = workgroupSum(dots[s][c]);
            if (NORM) sumSquares[c] = workgroupSum(sumSquares[c]);
        }
        normScale[c] = NORM ? inversesqrt(sumSquares[c] / float(p.cols) + p.eps) : 1.0;
    }
}
