// Push constants of the embedding lookup. rows, cols, wStride and formatWords carry
// matvec_params.glsl's names, as the dequant_<format>.glsl files read them.
layout(push_constant) uniform Params {
    uint rows;        // this dispatch's row chunk: ids [firstRow, firstRow + rows)
    uint cols;        // elements per row
    uint wStride;     // table row stride (multiple of 4)
    uint outStride;   // h row stride (multiple of 4)
    uint tokens;
    uint vocab;       // the whole table's rows
    uint firstRow;
    uint formatWords; // block formats: first word of the scales
} p;
