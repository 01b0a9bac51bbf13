#version 450
// Causal grouped-query attention over the paged KV cache, for prefill and decode alike.
// One workgroup per (kv head, token): it serves the GROUP query heads that share the kv
// head, so each K/V row is read once per group. Lanes split the head's dimensions
// (DIMS_PER_LANE each); a score is one workgroup sum; softmax is computed online
// (running max and sum), so any context length works in one pass with no score buffer.
#include "common.glsl"
#include "kv_cache.glsl"

layout(constant_id = 2) const uint GROUP = 1;         // query heads per kv head
layout(constant_id = 3) const uint DIMS_PER_LANE = 8; // headDim / WG
// Sliding-window layers (gemma3's local ones): a query at position p sees p - WINDOW + 1 .. p;
// 0: every earlier position (the loop's start folds to 0).
layout(constant_id = 20) const uint WINDOW = 0;

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
    uint kvBlocks; // physical blocks in the KV cache buffer (kv_cache.glsl)
} p;

layout(std430, binding = 0) readonly buffer Queries { float queries[]; };
// The cache as a uniform texel buffer of 32-bit words, two halves each: lavapipe gathers
// texels with vector loads but reads a storage buffer lane by lane.
layout(binding = 1) uniform usamplerBuffer kvTexels;
uint kvWord(uint i) { return texelFetch(kvTexels, int(i)).x; }
float kvHalf(uint i) { return unpackHalf2x16(kvWord(i >> 1) >> ((i & 1u) << 4)).x; }
layout(std430, binding = 2) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 3) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 4) writeonly buffer Output { float outValues[]; };

void main() {
    const uint kvHead = gl_WorkGroupID.x;
    const uint token = gl_WorkGroupID.y;
    const uint dim0 = gl_LocalInvocationID.x * DIMS_PER_LANE;
    const TokenInfo info = tokenInfo[token];

    float q[GROUP][DIMS_PER_LANE];
    float acc[GROUP][DIMS_PER_LANE];
    float runningMax[GROUP];
    float runningSum[GROUP];
    [[unroll]] for (uint g = 0; g < GROUP; ++g) {
        const uint base = token * p.qStride + (kvHead * GROUP + g) * p.headDim + dim0;
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) {
            q[g][d] = queries[base + d] * p.scale;
            acc[g][d] = 0.0;
        }
        runningMax[g] = -1.0e30;
        runningSum[g] = 0.0;
    }

    const uint firstPosition =
        WINDOW == 0u || info.position < WINDOW ? 0u : info.position + 1u - WINDOW;
    for (uint position = firstPosition; position <= info.position; ++position) {
        const uint block = blockTables[info.sequence * p.maxBlocks + position / p.blockSize];
        const uint offset = position % p.blockSize;
        const uint kBase =
            kvIndex(block, 0, kvHead, offset, dim0, p.kvHeads, p.kvBlocks, p.blockSize, p.headDim);
        const uint vBase =
            kvIndex(block, 1, kvHead, offset, dim0, p.kvHeads, p.kvBlocks, p.blockSize, p.headDim);
        float k[DIMS_PER_LANE];
        float v[DIMS_PER_LANE];
        if (DIMS_PER_LANE % 2 == 0) {
            // kBase, vBase are even: headDim and the lane offset are.
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; d += 2) {
                const vec2 kPair = unpackHalf2x16(kvWord((kBase + d) >> 1));
                const vec2 vPair = unpackHalf2x16(kvWord((vBase + d) >> 1));
                k[d] = kPair.x;
                k[d + 1] = kPair.y;
                v[d] = vPair.x;
                v[d + 1] = vPair.y;
            }
        } else {
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) {
                k[d] = kvHalf(kBase + d);
                v[d] = kvHalf(vBase + d);
            }
        }
        [[unroll]] for (uint g = 0; g < GROUP; ++g) {
            float partial = 0.0;
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d) partial += q[g][d] * k[d];
            const float score = workgroupSum(partial);
            const float newMax = max(runningMax[g], score);
            const float correction = exp(runningMax[g] - newMax);
            const float weight = exp(score - newMax);
            runningSum[g] = runningSum[g] * correction + weight;
            runningMax[g] = newMax;
            [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d)
                acc[g][d] = acc[g][d] * correction + weight * v[d];
        }
    }

    [[unroll]] for (uint g = 0; g < GROUP; ++g) {
        const uint base = token * p.outStride + (kvHead * GROUP + g) * p.headDim + dim0;
        const float inverse = 1.0 / runningSum[g];
        [[unroll]] for (uint d = 0; d < DIMS_PER_LANE; ++d)
            outValues[base + d] = acc[g][d] * inverse;
    }
}
