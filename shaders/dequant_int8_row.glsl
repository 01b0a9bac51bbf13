// Weight format int8-row: int8 codes q (-127..127), w = q * scale, one fp16 scale per output row.
// A row is one block: the broadcast path of matvec_core.glsl steps in chunks that never
// cross a row (rows are padded to a multiple of 4 x WG), so a chunk's scale is its row's.
#define WEIGHT_BLOCK 65536
#define CODE_BITS 8
#include "quant_codes.glsl"
// matvec_core.glsl: the path that reads four words of codes per fetch.
#define WEIGHT_BYTES

vec4 weightQuants(uint c) { return int8Codes(c); }
// matvec_core.glsl loads a row's scale once per slot (ROW_SCALES); the element-wise paths
// find the row of element e.
#define ROW_SCALES
float rowScale(uint row) { return scaleHalf(row); }
float weightScale(uint e) { return rowScale(e / p.wStride); }
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
