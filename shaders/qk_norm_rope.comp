#version 450
// The second half of attention's input for models with Q/K norm (qwen3, gemma3), after a
// plain matvec wrote each token's Q|K|V rows: every Q and K head RMS-normalized with its
// shared weight vector, rotated by RoPE (the layer's table: its own base, or zeros for no
// rotation), Q to the query rows, K and V into the paged KV cache. One invocation per
// (head, token) walks the head's dimensions in long contiguous loops (lavapipe's strength);
// a Q/K-norm model pays this one extra dispatch per layer, the llama family never records it.
#include "common.glsl"
#include "kv_cache.glsl"
#include "rope.glsl"

layout(constant_id = 2) const bool SPLIT_HALF = false;

layout(push_constant) uniform Params {
    uint tokens;
    uint heads;
    uint kvHeads;
    uint headDim;
    uint inStride;  // elements per Q|K|V row
    uint qStride;   // elements per query row
    uint blockSize;
    uint maxBlocks;
    uint kvBlocks;  // physical blocks in the KV cache buffer
    float eps;
} p;

layout(std430, binding = 0) readonly buffer QkvRows { float qkv[]; };
layout(std430, binding = 1) readonly buffer QNorm { float qNorm[]; };
layout(std430, binding = 2) readonly buffer KNorm { float kNorm[]; };
layout(std430, binding = 3) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 4) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 5) writeonly buffer KvCache { float16_t kvCache[]; };
layout(std430, binding = 6) readonly buffer RopeFrequencies { float ropeInvFrequency[]; };
layout(std430, binding = 7) writeonly buffer Queries { float queries[]; };

void main() {
    const uint head = gl_GlobalInvocationID.x; // Q heads, then K heads, then V heads
    const uint token = gl_GlobalInvocationID.y;
    if (head >= p.heads + 2 * p.kvHeads || token >= p.tokens) return;
    const uint d = p.headDim;
    const uint source = token * p.inStride + head * d;
    const bool isQuery = head < p.heads;
    const bool isKey = !isQuery && head < p.heads + p.kvHeads;
    const TokenInfo info = tokenInfo[token];
    const uint blockIndex = info.position / p.blockSize;
    const uint block = blockTables[info.sequence * p.maxBlocks + blockIndex];
    const uint offset = info.position - blockIndex * p.blockSize;
    if (!isQuery && !isKey) {
        const uint kvHead = head - p.heads - p.kvHeads;
        const uint target =
            kvIndex(block, 1, kvHead, offset, 0, p.kvHeads, p.kvBlocks, p.blockSize, d);
        for (uint i = 0; i < d; ++i) kvCache[target + i] = float16_t(qkv[source + i]);
        return;
    }
    float sumSquares = 0.0;
    for (uint i = 0; i < d; ++i) sumSquares += qkv[source + i] * qkv[source + i];
    const float scale = inversesqrt(sumSquares / float(d) + p.eps);
    const float position = float(info.position);
    const uint kvHead = head - p.heads;
    const uint keyBase = kvIndex(block, 0, kvHead, offset, 0, p.kvHeads, p.kvBlocks, p.blockSize, d);
    for (uint j = 0; j < d / 2; ++j) {
        const uvec2 dims = ropePairRows(0, j, d, SPLIT_HALF);
        const float weight0 = isQuery ? qNorm[dims.x] : kNorm[dims.x];
        const float weight1 = isQuery ? qNorm[dims.y] : kNorm[dims.y];
        const vec2 rotated = rotatePair(qkv[source + dims.x] * scale * weight0,
                                        qkv[source + dims.y] * scale * weight1,
                                        position * ropeInvFrequency[j]);
        if (isQuery) {
            queries[token * p.qStride + head * d + dims.x] = rotated.x;
            queries[token * p.qStride + head * d + dims.y] = rotated.y;
        } else {
            kvCache[keyBase + dims.x] = float16_t(rotated.x);
            kvCache[keyBase + dims.y] = float16_t(rotated.y);
        }
    }
}
