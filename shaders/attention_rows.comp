#version 450
// Causal grouped-query attention over the paged KV cache, for CPU devices (lavapipe):
// the same contract as attention.comp, laid out for a one-subgroup workgroup where lanes
// are SIMD elements. Scores: each lane takes one position of a chunk of WG positions and
// computes its full dot products (no reduction per score); softmax is online per chunk
// (one max and one sum reduction per chunk instead of per position); values: lanes switch
// to splitting the head's dimensions and take each position's weight by shuffle.
#include "common.glsl"
#include "kv_cache.glsl"

layout(constant_id = 2) const uint GROUP = 1;         // query heads per kv head
layout(constant_id = 3) const uint DIMS_PER_LANE = 8; // headDim / WG, a multiple of 8

layout(push_constant) uniform Params {
    uint tokens;
    uint heads;
    uint kvHeads;
    uint headDim;
    uint blockSize;
    uint maxBlocks;
    uint qStride;
    uint outStride;
    float scale; // 1 / sqrt(headDim)
} p;

layout(std430, binding = 0) readonly buffer Queries { float queries[]; };
// The cache as a uniform texel buffer of four 32-bit words (eight halves) per texel: lavapipe
// reads a storage buffer lane by lane and a 4-byte texel with one gather instruction, but a
// 16-byte texel with plain loads. Rows of the cache start on a texel (headDim % 8 == 0).
layout(binding = 1) uniform usamplerBuffer kvTexels;
// The eight halves from half index i (a multiple of 8), lowest first.
void kvHalves8(uint i, out vec4 low, out vec4 high) {
    const uvec4 words = texelFetch(kvTexels, int(i >> 3));
    low = vec4(unpackHalf2x16(words.x), unpackHalf2x16(words.y));
    high = vec4(unpackHalf2x16(words.z), unpackHalf2x16(words.w));
}
layout(std430, binding = 2) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 3) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 4) writeonly buffer Output { float outValues[]; };

void main() {
    const uint kvHead = gl_WorkGroupID.x;
    const uint token = gl_WorkGroupID.y;
    const uint lane = gl_LocalInvocationID.x;
    const uint dim0 = lane * DIMS_PER_LANE;
    const TokenInfo info = tokenInfo[token];
    const uint last = info.position;

    // Each lane holds its DIMS_PER_LANE dimensions of the queries; the score loop passes
    // them around with subgroupShuffle (register permutes on lavapipe, where a load at an
    // index the lanes share is still one load per lane).
    float q[GROUP][DIMS_PER_LANE];
    float acc[GROUP][DIMS_PER_LANE];
    float runningMax[GROUP];
    float runningSum[GROUP];
    [[unroll]] for (uint g = 0; g < GROUP; ++g) {
        const uint qBase = token * p.qStride + (kvHead * GROUP + g) * p.headDim + dim0;
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) {
            q[g][d] = queries[qBase + d];
            acc[g][d] = 0.0;
        }
        runningMax[g] = -1.0e30;
        runningSum[g] = 0.0;
    }

    for (uint first = 0; first <= last; first += WG) {
        const bool valid = first + lane <= last;
        const uint position = min(first + lane, last);
        const uint block = blockTables[info.sequence * p.maxBlocks + position / p.blockSize];
        const uint offset = position % p.blockSize;
        const uint kBase = kvIndex(block, 0, kvHead, offset, 0, p.kvHeads, p.blockSize, p.headDim);
        float score[GROUP];
        [[unroll]] for (uint g = 0; g < GROUP; ++g) score[g] = 0.0;
        // headDim = WG x DIMS_PER_LANE: lane `source` holds dimensions
        // source * DIMS_PER_LANE ...; both loops have constant bounds and unroll.
        [[unroll]] for (uint source = 0; source < WG; ++source) {
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 8) {
                vec4 kLow, kHigh;
                kvHalves8(kBase + source * DIMS_PER_LANE + d, kLow, kHigh);
                [[unroll]] for (uint g = 0; g < GROUP; ++g) {
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
        float weight[GROUP];
        [[unroll]] for (uint g = 0; g < GROUP; ++g) {
            const float s = valid ? score[g] * p.scale : -3.0e38;
            const float newMax = max(runningMax[g], subgroupMax(s));
            const float correction = exp(runningMax[g] - newMax);
            weight[g] = valid ? exp(s - newMax) : 0.0;
            runningSum[g] = runningSum[g] * correction + subgroupAdd(weight[g]);
            runningMax[g] = newMax;
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) acc[g][d] *= correction;
        }
        const uint count = min(WG, last + 1 - first);
        for (uint j = 0; j < count; ++j) {
            // Position j's block and offset from the lane that took it for the scores: an
            // integer division here would run lane by lane (lavapipe) once per position.
            const uint blockJ = subgroupShuffle(block, j);
            const uint offsetJ = subgroupShuffle(offset, j);
            const uint vBase =
                kvIndex(blockJ, 1, kvHead, offsetJ, dim0, p.kvHeads, p.blockSize, p.headDim);
            float v[DIMS_PER_LANE];
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 8) {
                vec4 low, high;
                kvHalves8(vBase + d, low, high);
                [[unroll]] for (uint k = 0; k < 4; ++k) {
                    v[d + k] = low[k];
                    v[d + 4 + k] = high[k];
                }
            }
            [[unroll]] for (uint g = 0; g < GROUP; ++g) {
                const float w = subgroupShuffle(weight[g], j);
                [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) acc[g][d] += w * v[d];
            }
        }
    }

    [[unroll]] for (uint g = 0; g < GROUP; ++g) {
        const uint base = token * p.outStride + (kvHead * GROUP + g) * p.headDim + dim0;
        const float inverse = 1.0 / runningSum[g];
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d)
            outValues[base + d] = acc[g][d] * inverse;
    }
}
