// Fused attention input: RMSNorm (prologue) -> Q, K, V rows of one combined matrix
// (Q heads, then K heads, then V heads) -> optional bias -> RoPE on Q and K -> Q to a
// buffer, K and V straight into the paged KV cache. Each lane (or workgroup) computes
// whole RoPE pairs, so the rotation needs no exchange between lanes.
#include "kv_cache.glsl"
#include "rope.glsl"

layout(constant_id = 6) const bool SPLIT_HALF = false;
layout(constant_id = 7) const bool BIAS = false;

layout(std430, binding = 2) writeonly buffer QueryOut { float queries[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 6) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 7) writeonly buffer KvCache { float16_t kvCache[]; };
layout(std430, binding = 8) readonly buffer RopeFrequencies { float ropeInvFrequency[]; };

// A row chunk of whole heads starts at row p.firstRow: pairs are numbered in the whole
// matrix, weight rows in the chunk.
uint firstPair() { return p.firstRow / 2; }
uvec2 rowsOfPair(uint pair) {
    const uint half_ = p.headDim / 2;
    return ropePairRows(pair / half_, pair % half_, p.headDim, SPLIT_HALF);
}
uint weightRow(uint slot) {
    const uint pair = min(slot / 2, p.rows / 2 - 1) + firstPair();
    const uvec2 rows = rowsOfPair(pair) - uvec2(p.firstRow);
    return (slot & 1) == 0 ? rows.x : rows.y;
}
uint inputRow(uint token) { return token; }

void main() {
    matvecCore();
    if (!laneWrites()) return;
    // What depends on the pair alone, once per slot pair, and what depends on the token
    // alone, once per token: on lavapipe every integer division and every storage-buffer
    // read is a loop over the lanes, and in a prefill tile the inner loop runs
    // SLOTS / 2 x TOKENS times (these epilogue costs made qkv_rope the slowest matrix
    // kernel per multiply-add).
    const uint half_ = p.headDim / 2;
    const uint pairSlots = SLOTS / 2;
    bool pairValid[pairSlots];
    uvec2 pairRows[pairSlots];
    uint pairHead[pairSlots];
    uint pairKvIndex[pairSlots]; // kvIndex of dims.x at block 0, offset 0 (K or V part)
    float pairFrequency[pairSlots];
    vec2 pairBias[pairSlots];
    [[unroll]] for (uint k = 0; k < pairSlots; ++k) {
        const uint localPair = slotOf(2 * k) / 2;
        pairValid[k] = localPair < p.rows / 2;
        const uint pair = min(localPair, p.rows / 2 - 1) + firstPair();
        const uvec2 rows = rowsOfPair(pair);
        const uint head = pair / half_;
        const uvec2 dims = rows - uvec2(head * p.headDim);
        pairRows[k] = rows;
        pairHead[k] = head;
        pairFrequency[k] = ropeInvFrequency[pair % half_];
        pairBias[k] = BIAS ? vec2(bias[rows.x], bias[rows.y]) : vec2(0.0);
        const bool isKey = head < p.heads + p.kvHeads;
        const uint kvHead = head - p.heads - (isKey ? 0 : p.kvHeads);
        pairKvIndex[k] =
            kvIndex(0, isKey ? 0 : 1, head < p.heads ? 0 : kvHead, 0, dims.x, p.kvHeads,
                    p.blockSize, p.headDim);
    }
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        const uint token = gl_WorkGroupID.y * TOKENS + c;
        if (token >= p.tokens) continue;
        const TokenInfo info = tokenInfo[token];
        const uint blockIndex = info.position / p.blockSize;
        const uint block = blockTables[info.sequence * p.maxBlocks + blockIndex];
        // kvIndex is linear: the pair's index at block 0, offset 0 plus the token's here.
        const uint tokenKvBase = kvIndex(block, 0, 0, info.position - blockIndex * p.blockSize,
                                         0, p.kvHeads, p.blockSize, p.headDim);
        const float position = float(info.position);
        [[unroll]] for (uint k = 0; k < pairSlots; ++k) {
            if (!pairValid[k]) continue;
            const uint s = 2 * k;
            vec2 v = vec2(dots[s][c], dots[s + 1][c]) * normScale[c] + pairBias[k];
            const uint head = pairHead[k];
            if (head < p.heads + p.kvHeads) v = rotatePair(v.x, v.y, position * pairFrequency[k]);
            if (head < p.heads) {
                queries[token * p.outStride + pairRows[k].x] = v.x;
                queries[token * p.outStride + pairRows[k].y] = v.y;
                continue;
            }
            const uint index = tokenKvBase + pairKvIndex[k];
            kvCache[index] = float16_t(v.x);
            kvCache[index + pairRows[k].y - pairRows[k].x] = float16_t(v.y);
        }
    }
}
