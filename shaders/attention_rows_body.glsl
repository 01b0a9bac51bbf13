// Causal grouped-query attention of one (kv head, token) over the paged KV cache, laid out
// for a one-subgroup workgroup where lanes are SIMD elements (CPU devices, lavapipe).
// Scores: each lane takes one position of a chunk of WG positions and computes its full
// dot products (no reduction per score); softmax is online per chunk (one max and one sum
// reduction per chunk instead of per position); values: lanes switch to splitting the
// head's dimensions and take each position's weight by shuffle.
//
// Used by attention_rows.comp (one workgroup per kv head and token) and by qkv_rope with
// FUSED_ATTENTION (the workgroup that completes a kv group's rows attends for it). The
// includer has included common.glsl and kv_cache.glsl, declares the specialization
// constants ATTENTION_GROUP (query heads per kv head), DIMS_PER_LANE (headDim / WG, a
// multiple of 8) and KV_BLOCK_SIZE (positions per cache block), the texel buffer kvTexels
// (the cache, four 32-bit words per texel), the arrays tokenInfo[] and blockTables[], and
// defines attentionQuery4(i) and storeAttention(i, v).

// Sliding-window layers (attention_rows.comp only; qkv_rope's fused attention leaves it 0):
// a query at position p sees p - WINDOW + 1 .. p. 0: every earlier position.
layout(constant_id = 20) const uint WINDOW = 0;

struct AttentionShape {
    uint qStride;   // elements per query row
    uint outStride; // elements per output row
    uint kvHeads;
    uint kvBlocks; // physical blocks in the cache buffer
    uint headDim;
    uint maxBlocks;
    float scale; // 1 / sqrt(headDim)
};

vec4 attentionQuery4(uint i); // queries i ... i + 3, i a multiple of 4
void storeAttention(uint i, float v);

// The eight halves from half index i (a multiple of 8), lowest first. Rows of the cache
// start on a texel (headDim % 8 == 0); lavapipe reads a 16-byte texel with plain loads,
// where a storage buffer is read lane by lane.
void kvHalves8(uint i, out vec4 low, out vec4 high) {
    const uvec4 words = texelFetch(kvTexels, int(i >> 3));
    low = vec4(unpackHalf2x16(words.x), unpackHalf2x16(words.y));
    high = vec4(unpackHalf2x16(words.z), unpackHalf2x16(words.w));
}

// Call from uniform control flow: every lane takes part. An inactive call reads the
// queries but no position and stores nothing: lavapipe runs code under a branch with an
// execution mask, and attention inside `if` measured 5x slower than the same call made by
// every workgroup (qkv_rope with FUSED_ATTENTION, one core).
void attendRows(uint kvHead, uint token, AttentionShape a, bool attends) {
    const uint lane = gl_LocalInvocationID.x;
    const uint dim0 = lane * DIMS_PER_LANE;
    const TokenInfo info = tokenInfo[token];
    const uint last = info.position;
    const uint end = attends ? last + 1 : 0; // positions [start, end)
    const uint start = WINDOW == 0u || last < WINDOW ? 0u : last + 1u - WINDOW;

    // Each lane holds its DIMS_PER_LANE dimensions of the queries; the score loop passes
    // them around with subgroupShuffle (register permutes on lavapipe, where a load at an
    // index the lanes share is still one load per lane).
    float q[ATTENTION_GROUP][DIMS_PER_LANE];
    float acc[ATTENTION_GROUP][DIMS_PER_LANE];
    float runningMax[ATTENTION_GROUP];
    float runningSum[ATTENTION_GROUP];
    [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) {
        const uint qBase = token * a.qStride + (kvHead * ATTENTION_GROUP + g) * a.headDim + dim0;
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 4) {
            const vec4 q4 = attentionQuery4(qBase + d);
            [[unroll]] for (uint k = 0; k < 4; ++k) {
                q[g][d + k] = q4[k];
                acc[g][d + k] = 0.0;
            }
        }
        runningMax[g] = -1.0e30;
        runningSum[g] = 0.0;
    }

    for (uint first = start; first < end; first += WG) {
        const bool valid = first + lane <= last;
        const uint position = min(first + lane, last);
        // KV_BLOCK_SIZE is a constant: on lavapipe a division by a value known only at run
        // time is a loop over the lanes, by a constant a shift or a multiply.
        const uint block = blockTables[info.sequence * a.maxBlocks + position / KV_BLOCK_SIZE];
        const uint offset = position % KV_BLOCK_SIZE;
        const uint kBase =
            kvIndex(block, 0, kvHead, offset, 0, a.kvHeads, a.kvBlocks, KV_BLOCK_SIZE, a.headDim);
        float score[ATTENTION_GROUP];
        [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) score[g] = 0.0;
        // headDim = WG x DIMS_PER_LANE: lane `source` holds dimensions
        // source * DIMS_PER_LANE ...; both loops have constant bounds and unroll.
        [[unroll]] for (uint source = 0; source < WG; ++source) {
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 8) {
                vec4 kLow, kHigh;
                kvHalves8(kBase + source * DIMS_PER_LANE + d, kLow, kHigh);
                [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) {
                    const vec4 qLow = vec4(
                        subgroupShuffle(q[g][d], source), subgroupShuffle(q[g][d + 1], source),
                        subgroupShuffle(q[g][d + 2], source), subgroupShuffle(q[g][d + 3], source));
                    const vec4 qHigh = vec4(
                        subgroupShuffle(q[g][d + 4], source), subgroupShuffle(q[g][d + 5], source),
                        subgroupShuffle(q[g][d + 6], source), subgroupShuffle(q[g][d + 7], source));
                    score[g] += dot(qLow, kLow) + dot(qHigh, kHigh);
                }
            }
        }
        float weight[ATTENTION_GROUP];
        [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) {
            const float s = valid ? score[g] * a.scale : -3.0e38;
            const float newMax = max(runningMax[g], subgroupMax(s));
            const float correction = exp(runningMax[g] - newMax);
            weight[g] = valid ? exp(s - newMax) : 0.0;
            runningSum[g] = runningSum[g] * correction + subgroupAdd(weight[g]);
            runningMax[g] = newMax;
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) acc[g][d] *= correction;
        }
        // Every lane of the chunk, a constant count: the loop unrolls and each shuffle takes
        // a constant lane, a broadcast, where a lane index known only at run time is a
        // loop over the lanes on lavapipe. Positions past the last weigh 0 and read the
        // last position's values (clamped above), so the sums are unchanged.
        [[unroll]] for (uint j = 0; j < WG; ++j) {
            // Position j's block and offset from the lane that took it for the scores: a
            // block-table read here would run lane by lane (lavapipe) once per position.
            const uint blockJ = subgroupShuffle(block, j);
            const uint offsetJ = subgroupShuffle(offset, j);
            const uint vBase =
                kvIndex(blockJ, 1, kvHead, offsetJ, dim0, a.kvHeads, a.kvBlocks, KV_BLOCK_SIZE,
                        a.headDim);
            float v[DIMS_PER_LANE];
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 8) {
                vec4 low, high;
                kvHalves8(vBase + d, low, high);
                [[unroll]] for (uint k = 0; k < 4; ++k) {
                    v[d + k] = low[k];
                    v[d + 4 + k] = high[k];
                }
            }
            [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) {
                const float w = subgroupShuffle(weight[g], j);
                [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) acc[g][d] += w * v[d];
            }
        }
    }

    if (!attends) return;
    [[unroll]] for (uint g = 0; g < ATTENTION_GROUP; ++g) {
        const uint base = token * a.outStride + (kvHead * ATTENTION_GROUP + g) * a.headDim + dim0;
        const float inverse = 1.0 / runningSum[g];
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d)
            storeAttention(base + d, acc[g][d] * inverse);
    }
}
