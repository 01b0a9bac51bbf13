#version 450
// Causal grouped-query attention over the paged KV cache, for CPU devices (lavapipe): the
// same contract as attention.comp, one workgroup (one subgroup) per (kv head, token); the
// work itself is attention_rows_body.glsl.
#include "common.glsl"
#include "kv_cache.glsl"

layout(constant_id = 2) const uint ATTENTION_GROUP = 1; // query heads per kv head
layout(constant_id = 3) const uint DIMS_PER_LANE = 8;   // headDim / WG, a multiple of 8
layout(constant_id = 4) const uint KV_BLOCK_SIZE = 16;  // positions per cache block (p.blockSize)

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
layout(binding = 1) uniform usamplerBuffer kvTexels;
layout(std430, binding = 2) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 3) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 4) writeonly buffer Output { float outValues[]; };

vec4 attentionQuery4(uint i) {
    return vec4(queries[i], queries[i + 1], queries[i + 2], queries[i + 3]);
}
void storeAttention(uint i, float v) { outValues[i] = v; }

#include "attention_rows_body.glsl"

void main() {
    attendRows(gl_WorkGroupID.x, gl_WorkGroupID.y,
               AttentionShape(p.qStride, p.outStride, p.kvHeads, p.kvBlocks, p.headDim, p.maxBlocks,
                              p.scale),
               true);
}
