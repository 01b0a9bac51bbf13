// Weight format q4_1 (GGUF): blocks of 32 weights of a padded row, 4-bit codes q,
// w = q * d + m, one word per block holding fp16 d (low half) and m (high half).
// WEIGHT_NIBBLES: matvec_core.glsl's whole-word path applies d and m once per block.
#define WEIGHT_BLOCK 32
#define WEIGHT_NIBBLES
#define CODE_BITS 4
#include "quant_codes.glsl"

// The scale word of element e. Rows hold an even number of blocks (64-column padding) and
// the scales start on a whole texel, so blocks 2k and 2k + 1 of a row share a texel
// (SCALE_WORD_PAIRS: matvec_core.glsl fetches it once per two chunks).
uint scaleWordIndex(uint e) { return p.formatWords + (e >> 5); }
#define SCALE_WORD_PAIRS
// The matrix may carry a copy of its scale words in a lane's slot order (matvec_core.glsl).
#define LANE_SCALE_LAYOUT
#define LANE_SCALE_WORDS
vec2 weightScaleMin(uint e) { return unpackHalf2x16(weightWord(scaleWordIndex(e))); }
vec4 dequantize4(uint e, uint c) {
    const vec2 scaleMin = weightScaleMin(e);
    return vec4(nibbleCodes(c)) * scaleMin.x + scaleMin.y;
}
