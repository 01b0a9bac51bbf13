// Push constants shared by the matrix-vector kernels (matvec, qkv_rope, ffn_gateup).
layout(push_constant) uniform Params {
    uint rows;      // output rows (pairs count twice)
    uint cols;      // logical input length (the RMS mean divides by this)
    uint wStride;   // elements per weight row, a multiple of 4 (rows are zero-padded)
    uint xStride;   // elements per input row, a multiple of 4 (zero-padded)
    uint outStride; // elements per output row
    uint tokens;    // input rows in this dispatch
    float eps;      // RMSNorm epsilon
    uint probeBase; // residual probe: offset of this layer's slots
    uint heads;     // qkv_rope: query heads
    uint kvHeads;
    uint headDim;
    uint maxBlocks; // block-table entries per sequence
    uint formatWords; // block formats: first word of the scales (see dequant_q8_0.glsl)
    uint firstRow;  // the weights are a row chunk starting at this row of the whole matrix
    uint attentionStride; // qkv_rope with FUSED_ATTENTION: elements per attention output row
    float attentionScale; // ... and 1 / sqrt(headDim)
    uint kvBlocks;  // qkv_rope: physical blocks in the KV cache buffer (kv_cache.glsl)
    uint laneScaleWords; // LANE_SCALES: first word of the lane-scale copy (matvec_core.glsl)
} p;
