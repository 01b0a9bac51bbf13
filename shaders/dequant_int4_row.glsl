// Weight formats int4-row and int4-tensor: 4-bit codes c = q + 8 (q in -7..7),
// w = (c - 8) * scale, one fp16 scale per output row (int4-tensor repeats its tensor's scale on
// every row, so a fused Q|K|V keeps each tensor's own).
// A row is one block (see dequant_int8_row.glsl).
#define WEIGHT_BLOCK 65536
#define CODE_BITS 4
#include "quant_codes.glsl"

vec4 weightQuants(uint c) { return vec4(nibbleCodes(c)) - 8.0; }
// matvec_core.glsl loads a row's scale once per slot (ROW_SCALES); the element-wise paths
// find the row of element e.
#define ROW_SCALES
float rowScale(uint row) { return scaleHalf(row); }
float weightScale(uint e) { return rowScale(e / p.wStride); }
// Whole-word path of matvec_core.glsl: w = code * scale + min per block.
#define WEIGHT_NIBBLES
vec2 scaleMinOf(float scale) { return vec2(scale, -8.0 * scale); }
vec2 weightScaleMin(uint e) { return scaleMinOf(weightScale(e)); }
vec4 dequantize4(uint e, uint c) { return weightQuants(c) * weightScale(e); }
