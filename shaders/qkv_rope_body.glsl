// Fused attention input: RMSNorm (prologue) -> Q, K, V rows of one combined matrix
// (Q heads, then K heads, then V heads) -> optional bias -> RoPE on Q and K -> Q to a
// buffer, K and V straight into the paged KV cache. Each lane (or workgroup) computes
// whole RoPE pairs, so the rotation needs no exchange between lanes.
//
// FUSED_ATTENTION (CPU devices, Kernels::fusesAttention): attention runs in the same
// dispatch, saving one dispatch per layer (on lavapipe each costs tens of microseconds of
// thread hand-off, about as much as a decode step's attention itself). Attention of kv
// group g needs the Q rows of its query heads and its K and V rows, which several
// workgroups compute; each of them counts its arrival on (g, token group) after its writes,
// and the one that arrives last attends for the group's tokens. No workgroup waits for
// another, so any order of execution is correct. It needs every sequence's new tokens in
// one token group (decode steps: one token per sequence). A matrix in several chunks (its
// parts stored in different types, e.g. Q and K in Q5_0 and V in Q8_0) fuses in its last
// chunk: the chunks before it ran as plain dispatches, so their rows are written, and only
// this dispatch's row groups count as arrivals.
#include "kv_cache.glsl"
#include "rope.glsl"

layout(constant_id = 6) const bool SPLIT_HALF = false;
layout(constant_id = 7) const bool BIAS = false;
layout(constant_id = 8) const bool FUSED_ATTENTION = false;
layout(constant_id = 9) const uint ATTENTION_GROUP = 1; // query heads per kv head
layout(constant_id = 10) const uint DIMS_PER_LANE = 8;  // headDim / WG, a multiple of 8
layout(constant_id = 11) const uint KV_BLOCK_SIZE = 16; // positions per cache block

// Read back by the fused attention of other workgroups: coherent.
layout(std430, binding = 2) coherent buffer QueryOut { float queries[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) readonly buffer Tokens { TokenInfo tokenInfo[]; };
layout(std430, binding = 6) readonly buffer BlockTables { uint blockTables[]; };
layout(std430, binding = 7) coherent writeonly buffer KvCache { float16_t kvCache[]; };
layout(std430, binding = 8) readonly buffer RopeFrequencies { float ropeInvFrequency[]; };
// FUSED_ATTENTION only: the cache again, as texels for the attention (binding 7's memory),
// the attention output, and one arrival counter per (kv group, token group), zero between
// dispatches (the last arrival resets its counter).
layout(binding = 9) uniform usamplerBuffer kvTexels;
layout(std430, binding = 10) writeonly buffer AttentionOut { float attentionOut[]; };
layout(std430, binding = 11) coherent buffer Arrivals { uint arrivals[]; };
// ... and the queries again (binding 2's memory), as texels: two vector loads per lane
// where the storage buffer takes a load per lane and element on lavapipe.
layout(binding = 12) uniform samplerBuffer queryTexels;

vec4 attentionQuery4(uint i) { return texelFetch(queryTexels, int(i >> 2)); }
void storeAttention(uint i, float v) { attentionOut[i] = v; }
#include "attention_rows_body.glsl"

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
// The fused path's head size, a constant: on lavapipe a division by a value known only at
// run time is a loop over the lanes, by a constant a multiply or a shift.
const uint FUSED_HEAD_DIM = DIMS_PER_LANE * WG;
// With attention fused and one head per row group, the row groups run kv group by kv group
// (its query heads, then its K and V heads): lavapipe's threads take workgroups in order,
// so a group's attention starts while the next groups' rows are still being computed,
// instead of all of it waiting for the V heads at the end of the matrix.
uint rowGroup() {
    const uint w = gl_WorkGroupID.x;
    if (!FUSED_ATTENTION || ROWS_PER_WG != FUSED_HEAD_DIM || p.firstRow != 0) return w;
    const uint perGroup = ATTENTION_GROUP + 2;
    const uint g = w / perGroup, i = w % perGroup;
    return i < ATTENTION_GROUP ? g * ATTENTION_GROUP + i
                               : p.heads + (i - ATTENTION_GROUP) * p.kvHeads + g;
}

void storeRows() {
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
                    p.kvBlocks, KV_BLOCK_SIZE, p.headDim);
    }
    [[unroll]] for (uint c = 0; c < TOKENS; ++c) {
        const uint token = gl_WorkGroupID.y * TOKENS + c;
        if (token >= p.tokens) continue;
        const TokenInfo info = tokenInfo[token];
        const uint blockIndex = info.position / KV_BLOCK_SIZE;
        const uint block = blockTables[info.sequence * p.maxBlocks + blockIndex];
        // kvIndex is linear: the pair's index at block 0, offset 0 plus the token's here.
        const uint tokenKvBase = kvIndex(block, 0, 0, info.position - blockIndex * KV_BLOCK_SIZE,
                                         0, p.kvHeads, p.kvBlocks, KV_BLOCK_SIZE, p.headDim);
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

uint kvGroupOfHead(uint head) {
    if (head < p.heads) return head / ATTENTION_GROUP;
    const uint kv = head - p.heads; // K heads, then V heads
    return kv < p.kvHeads ? kv : kv - p.kvHeads;
}
// The kv groups (bit g) whose Q, K or V rows row group `index` computes: its slots are
// [index, index + 1) x ROWS_PER_WG (slotOf), and slot s is a row of head
// (firstRow + s) / headDim (two slots per RoPE pair; chunks hold whole heads).
uint kvGroupsOf(uint index) {
    const uint first = index * ROWS_PER_WG;
    const uint end = min(first + ROWS_PER_WG, p.rows);
    const uint firstHead = p.firstRow / FUSED_HEAD_DIM;
    uint groups = 1u << kvGroupOfHead(firstHead + (end - 1) / FUSED_HEAD_DIM);
    for (uint slot = first; slot < end; slot += FUSED_HEAD_DIM)
        groups |= 1u << kvGroupOfHead(firstHead + slot / FUSED_HEAD_DIM);
    return groups;
}

// How many of this dispatch's row groups compute rows of kv group g: those over its query
// heads, its K head and its V head, three runs in row order (cut to the chunk's rows,
// numbered from its first) that can share only their end groups.
uint arrivalsExpected(uint g) {
    const uvec3 wholeFirst =
        uvec3(g * ATTENTION_GROUP, p.heads + g, p.heads + p.kvHeads + g) * FUSED_HEAD_DIM;
    const uvec3 wholeEnds = wholeFirst + uvec3(ATTENTION_GROUP, 1, 1) * FUSED_HEAD_DIM;
    const uvec3 firstRows = clamp(wholeFirst, uvec3(p.firstRow), uvec3(p.firstRow + p.rows)) -
                            uvec3(p.firstRow);
    const uvec3 ends = clamp(wholeEnds, uvec3(p.firstRow), uvec3(p.firstRow + p.rows)) -
                       uvec3(p.firstRow);
    const bvec3 present = greaterThan(ends, firstRows);
    const uvec3 firstGroups = firstRows / ROWS_PER_WG, lastGroups = (max(ends, 1u) - 1u) / ROWS_PER_WG;
    const uvec3 runs = mix(uvec3(0u), lastGroups - firstGroups + 1u, present);
    const bool qSharesK = present.x && present.y && lastGroups.x == firstGroups.y;
    const bool kSharesV = present.y && present.z && lastGroups.y == firstGroups.z;
    return runs.x + runs.y + runs.z - (qSharesK ? 1u : 0u) - (kSharesV ? 1u : 0u);
}

void attendCompletedGroups() {
    // Every lane's Q and K/V writes land before the arrival is counted. The workgroup is
    // one subgroup here (Kernels::fusesAttention), so a subgroup barrier orders the lanes:
    // lavapipe builds a workgroup barrier() as a coroutine switch.
    memoryBarrierBuffer();
    subgroupBarrier();
    // Straight-line code and loops with a count every lane agrees on, branches only around
    // single operations: lavapipe runs a branch's body under an execution mask (see
    // attendRows).
    uint pending = kvGroupsOf(rowGroup());
    const uint touched = bitCount(pending);
    uint completed = 0u;
    for (uint k = 0; k < touched; ++k) {
        const uint g = findLSB(pending);
        pending &= pending - 1u;
        const uint counter = g * gl_NumWorkGroups.y + gl_WorkGroupID.y;
        uint arrived = 0u;
        if (subgroupElect()) arrived = atomicAdd(arrivals[counter], 1u) + 1u;
        const bool last = subgroupMax(arrived) == arrivalsExpected(g);
        // Every arrival is in: the next dispatch counts from 0.
        if (last && subgroupElect()) arrivals[counter] = 0u;
        completed |= last ? 1u << g : 0u;
    }
    memoryBarrierBuffer();
    const AttentionShape shape =
        AttentionShape(p.outStride, p.attentionStride, p.kvHeads, p.kvBlocks, p.headDim,
                       p.maxBlocks, p.attentionScale);
    // One pass per completed kv group: a loop, which lavapipe leaves at once when it has
    // nothing to do, where a branch would run the attention under an execution mask (see
    // attendRows).
    const uint passes = bitCount(completed);
    uint remaining = completed;
    for (uint pass = 0; pass < passes; ++pass) {
        const uint g = findLSB(remaining);
        remaining &= remaining - 1u;
        for (uint c = 0; c < TOKENS; ++c) {
            const uint token = gl_WorkGroupID.y * TOKENS + c;
            attendRows(g, min(token, p.tokens - 1), shape, token < p.tokens);
        }
    }
}

void main() {
    matvecCore();
    if (laneWrites()) storeRows();
    if (FUSED_ATTENTION) attendCompletedGroups();
}
