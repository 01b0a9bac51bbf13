#pragma once
// Block quantizers of ggml's super-block types (256 values per block: Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K, IQ4_XS), called by quantizeGgml (models/quant/GgmlQuantize.hpp). Each writes a valid
// block in the layout models/formats/TensorType.cpp decodes: per-sub-block scales (and mins)
// from the sub-block's range, quantized against the super-block scale, then each value
// rounded to the nearest code under its final scale. Not llama.cpp's search (which tries
// several scales per sub-block): the files they write read the same way, with a little
// more error.
#include <cstdint>

namespace inferscope::models::superblocks {

constexpr int kSuperBlock = 256;

void quantizeQ2_K(const float* x, std::uint8_t* out);
void quantizeQ3_K(const float* x, std::uint8_t* out);
void quantizeQ4_K(const float* x, std::uint8_t* out);
void quantizeQ5_K(const float* x, std::uint8_t* out);
void quantizeQ6_K(const float* x, std::uint8_t* out);
void quantizeIQ4_XS(const float* x, std::uint8_t* out);

// The IQ4_NL codebook index nearest to v (in units of the block scale).
int nearestIq4NlLevel(float v);

} // namespace inferscope::models::superblocks
