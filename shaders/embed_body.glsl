// h[t] = table[token[t]] * EMBED_SCALE: the embedding row of each token, widened to f32
// (gemma3 scales it by sqrt(hidden); 1 elsewhere, folded away). One workgroup per token;
// lanes stride the row four elements at a time.
layout(constant_id = 14) const float EMBED_SCALE = 1.0;
layout(push_constant) uniform Params {
    uint cols;      // elements per row
    uint rowStride; // table row stride (multiple of 4)
    uint outStride; // h row stride (multiple of 4)
    uint tokens;
    uint vocab;     // the whole table's rows
    uint firstRow;  // this dispatch's row chunk: ids [firstRow, firstRow + chunkRows)
    uint chunkRows;
} p;

layout(std430, binding = 1) readonly buffer TokenIds { uint tokenIds[]; };
layout(std430, binding = 2) writeonly buffer Hidden { vec4 hidden4[]; };

void main() {
    const uint token = gl_WorkGroupID.x;
    const uint id = min(tokenIds[token], p.vocab - 1);
    if (id < p.firstRow || id - p.firstRow >= p.chunkRows) return;
    const uint row = id - p.firstRow;
    const uint vecs = p.rowStride >> 2;
    const uint codes = codeRowBase(row, p.rowStride);
    for (uint i = gl_LocalInvocationID.x; i < vecs; i += WG) {
        hidden4[token * (p.outStride >> 2) + i] =
            dequantize4(row * p.rowStride + i * 4, codeElement(codes, i * 4)) * EMBED_SCALE;
    }
}
