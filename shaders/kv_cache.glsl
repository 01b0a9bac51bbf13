// Paged KV cache: each layer's buffer holds blocks of `blockSize` positions; a block holds
// K then V, each [kvHeads][blockSize][headDim] halves. A sequence's block table maps its
// logical block i (positions i*blockSize ...) to a physical block.
struct TokenInfo {
    uint sequence; // slot of the token's sequence in the block-table buffer
    uint position; // position of the token in its sequence
};

uint kvIndex(uint block, uint kind, uint kvHead, uint offset, uint dim, uint kvHeads,
             uint blockSize, uint headDim) {
    return (((block * 2 + kind) * kvHeads + kvHead) * blockSize + offset) * headDim + dim;
}
