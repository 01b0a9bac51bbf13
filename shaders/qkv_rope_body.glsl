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
    const uint half_ = p.headDim / 2;
    for (uint s = 0; s < SLOTS; s += 2) {
        const uint localPair = slotOf(s) / 2;
        if (localPair >= p.rows / 2) continue;
        const uint pair = localPair + firstPair();
        const uvec2 rows = rowsOfPair(pair);
        const uint head = pair / half_;
        const uint j = pair % half_;
        const uvec2 dims = rows - uvec2(head * p.headDim);
        for (uint c = 0; c < TOKENS; ++c) {
            const uint token = gl_WorkGroupID.y * TOKENS + c;
            if (token >= p.tokens) continue;
            vec2 v = vec2(dots[s][c], dots[s + 1][c]) * normScale[c];
            if (BIAS) v += vec2(bias[rows.x], bias[rows.y]);
            const TokenInfo info = tokenInfo[token];
            if (head < p.heads + p.kvHeads) {
                v = rotatePair(v.x, v.y, float(info.position) * ropeInvFrequency[j]);
            }
            if (head < p.heads) {
                queries[token * p.outStride + rows.x] = v.x;
                queries[token * p.outStride + rows.y] = v.y;
                continue;
            }
            const bool isKey = head < p.heads + p.kvHeads;
            const uint kvHead = head - p.heads - (isKey ? 0 : p.kvHeads);
            const uint block =
                blockTables[info.sequence * p.maxBlocks + info.position / p.blockSize];
            const uint offset = info.position % p.blockSize;
            const uint kind = isKey ? 0 : 1;
            kvCache[kvIndex(block, kind, kvHead, offset, dims.x, p.kvHeads, p.blockSize,
                            p.headDim)] = float16_t(v.x);
            kvCache[kvIndex(block, kind, kvHead, offset, dims.y, p.kvHeads, p.blockSize,
                            p.headDim)] = float16_t(v.y);
        }
    }
}
