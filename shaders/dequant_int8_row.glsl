// Weight formats int8-row and int8-tensor: int8 codes q (-127..127), w = q * scale, one fp16
// scale per output row (int8-tensor repeats its tensor's scale on every row, so a fused Q|K|V
// keeps each tensor's own).
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
