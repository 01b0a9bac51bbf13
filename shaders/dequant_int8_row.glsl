// Weight format int8-row: int8 codes q (-127..127), w = q * scale, one fp16 scale per output row.
// A row is one block: the broadcast path of matvec_core.glsl steps in chunks that never
// cross a row (rows are padded to a multiple of 4 x WG), so one scale load per row and chunk.
#define WEIGHT_BLOCK 65536
#define CODE_BITS 8
#include "quant_codes.glsl"
// matvec_core.glsl: the path that reads four words of codes per fetch.
#define WEIGHT_BYTES

vec4 weightQuants(uint c) { return int8Codes(c); }
float weightScale(uint e) { return scaleHalf(e / p.wStride); }
// matvec_core.glsl loads a row's scale once per slot (rowScale) instead of dividing per chunk.
#define ROW_SCALES
float rowScale(uint row) { return scaleHalf(row); }
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
