// Paged KV cache: each layer's buffer holds `kvBlocks` physical blocks of `blockSize`
// positions, laid out [K|V][kvHeads][kvBlocks][blockSize][headDim] halves. A sequence's
// block table maps its logical block i (positions i*blockSize ...) to a physical block.
// Head-major: the blocks a sequence takes in order (the allocator hands them out so) put
// each kv head's keys, and its values, in one run, which a core streams with its
// prefetchers; block-major (a block's K and V of every head together) broke that run every
// blockSize positions (default model, q4_1, one core, C = 1024: qkv_rope with its fused
// attention 13.8 -> 9.0 ms per decode step).
struct TokenInfo {
    uint sequence; // slot of the token's sequence in the block-table buffer
    uint position; // position of the token in its sequence
};

uint kvIndex(uint block, uint kind, uint kvHead, uint offset, uint dim, uint kvHeads,
             uint kvBlocks, uint blockSize, uint headDim) {
    return (((kind * kvHeads + kvHead) * kvBlocks + block) * blockSize + offset) * headDim + dim;
}
