// Where a weight code sits in the matrix buffer (compute/formats/DeviceCodeLayout.hpp). The
// includer defines CODE_BITS (32, 16, 8 or 4). ROW_BLOCK 0: row-major, code (row, col) at
// element row * stride + col. Otherwise the rows of each block of ROW_BLOCK rows (a power of
// two) are interleaved 16 bytes at a time, so that the lanes of a CPU device, each streaming
// rows of its own, read a few sequential streams instead of one stream per row.
// The scales are not reordered: they are addressed by the row-major element index e.
layout(constant_id = 13) const uint ROW_BLOCK = 0;
const uint CODES_PER_UNIT = 128 / CODE_BITS;

// The code element index of column 0 of `row` (stride: elements per padded row).
uint codeRowBase(uint row, uint stride) {
    if (ROW_BLOCK == 0) return row * stride;
    return (row & ~(ROW_BLOCK - 1u)) * stride + (row & (ROW_BLOCK - 1u)) * CODES_PER_UNIT;
}
// The code element index of column `col` of the row whose base is rowBase. Codes stay
// contiguous within a 16-byte unit, so a fetch of up to one unit needs one call.
uint codeElement(uint rowBase, uint col) {
    if (ROW_BLOCK == 0) return rowBase + col;
    return rowBase + (col & ~(CODES_PER_UNIT - 1u)) * ROW_BLOCK + (col & (CODES_PER_UNIT - 1u));
}
