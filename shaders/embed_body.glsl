// h[t] = table[token[t]] * EMBED_SCALE: the embedding row of each token, widened to f32
// (gemma3 scales it by sqrt(hidden); 1 elsewhere, folded away). One workgroup per token;
// lanes stride the row four elements at a time. Push constants: embed_params.glsl.
layout(constant_id = 14) const float EMBED_SCALE = 1.0;

layout(std430, binding = 1) readonly buffer TokenIds { uint tokenIds[]; };
layout(std430, binding = 2) writeonly buffer Hidden { vec4 hidden4[]; };

void main() {
    const uint token = gl_WorkGroupID.x;
    const uint id = min(tokenIds[token], p.vocab - 1);
    if (id < p.firstRow || id - p.firstRow >= p.rows) return;
    const uint row = id - p.firstRow;
    const uint vecs = p.wStride >> 2;
    const uint codes = codeRowBase(row, p.wStride);
    for (uint i = gl_LocalInvocationID.x; i < vecs; i += WG) {
        // Padding columns stay zero: a format with offsets (q4_1's m) would fill them.
        const vec4 inRow = vec4(lessThan(uvec4(i * 4) + uvec4(0, 1, 2, 3), uvec4(p.cols)));
        hidden4[token * (p.outStride >> 2) + i] =
            dequantize4(row * p.wStride + i * 4, codeElement(codes, i * 4)) * inRow * EMBED_SCALE;
    }
}
