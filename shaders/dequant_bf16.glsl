// Weight format bf16: bfloat16 rows (GGUF BF16 as stored), two per word, read as texels of
// four words (quant_codes.glsl): a bfloat16 is the top half of its float's bits.
#define CODE_BITS 16
#include "quant_codes.glsl"

// e: the row-major element index (unused: no scales); c: the code element index.
vec4 dequantize4(uint e, uint c) {
    const uvec4 texel = weightWords4((c >> 1) & ~3u);
    const uvec2 words = ((c >> 2) & 1u) == 0u ? texel.xy : texel.zw;
    return vec4(uintBitsToFloat(words.x << 16), uintBitsToFloat(words.x & 0xffff0000u),
                uintBitsToFloat(words.y << 16), uintBitsToFloat(words.y & 0xffff0000u));
}
