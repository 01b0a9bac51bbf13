#include "models/quant/GgmlSuperBlocks.hpp"

#include "models/formats/HalfFloat.hpp"
#include "models/formats/TensorType.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace inferscope::models::superblocks {

namespace {

// Stores value as fp16 at out and returns what the decoder will read back.
float putHalf(std::uint8_t* out, float value) {
    const std::uint16_t bits = floatToHalf(value);
    out[0] = static_cast<std::uint8_t>(bits);
    out[1] = static_cast<std::uint8_t>(bits >> 8);
    return halfToFloat(bits);
}

int roundClamped(float v, int low, int high) {
    return std::clamp(static_cast<int>(std::lround(v)), low, high);
}

// The value of largest magnitude, with its sign.
float signedMax(const float* x, int n) {
    float best = 0.0f;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
    return best;
}

// Asymmetric sub-blocks (Q2_K, Q4_K, Q5_K): x ~ d sc q - dmin m with q in 0..maxCode and
// sc, m in 0..maxScale. Fills codes (one per value), scales and mins; returns d and dmin as
// stored (at dOut and dOut + 2).
void asymmetric(const float* x, int subBlock, int maxCode, int maxScale, std::uint8_t* dOut,
                std::uint8_t* codes, std::uint8_t* scales, std::uint8_t* mins) {
    const int count = kSuperBlock / subBlock;
    float range[16], offset[16];
    float maxRange = 0.0f, maxOffset = 0.0f;
    for (int j = 0; j < count; ++j) {
        const float* v = x + j * subBlock;
        float lo = 0.0f, hi = 0.0f; // the minimum is kept <= 0, as ggml keeps it
        for (int i = 0; i < subBlock; ++i) {
            lo = std::min(lo, v[i]);
            hi = std::max(hi, v[i]);
        }
        range[j] = (hi - lo) / static_cast<float>(maxCode);
        offset[j] = -lo;
        maxRange = std::max(maxRange, range[j]);
        maxOffset = std::max(maxOffset, offset[j]);
    }
    const float d = putHalf(dOut, maxRange / static_cast<float>(maxScale));
    const float dmin = putHalf(dOut + 2, maxOffset / static_cast<float>(maxScale));
    for (int j = 0; j < count; ++j) {
        // Round the scale up so the sub-block's range fits its codes.
        scales[j] = static_cast<std::uint8_t>(
            d > 0.0f ? std::clamp(static_cast<int>(std::ceil(range[j] / d)), 0, maxScale) : 0);
        mins[j] = static_cast<std::uint8_t>(
            dmin > 0.0f ? roundClamped(offset[j] / dmin, 0, maxScale) : 0);
        const float step = d * static_cast<float>(scales[j]);
        const float shift = dmin * static_cast<float>(mins[j]);
        for (int i = 0; i < subBlock; ++i) {
            const float v = x[j * subBlock + i];
            codes[j * subBlock + i] = static_cast<std::uint8_t>(
                step > 0.0f ? roundClamped((v + shift) / step, 0, maxCode) : 0);
        }
    }
}

// Symmetric sub-blocks (Q3_K, Q6_K): x ~ d sc (q - zero) with q in 0..2 zero - 1 and sc in
// -maxScale..maxScale. Returns d as stored at dOut.
void symmetric(const float* x, int subBlock, int zero, int maxScale, std::uint8_t* dOut,
               std::uint8_t* codes, int* scales) {
    const int count = kSuperBlock / subBlock;
    float scale[16];
    float maxAbs = 0.0f;
    for (int j = 0; j < count; ++j) {
        // The value of largest magnitude maps to code 0 (q - zero = -zero), as Q4_0 does.
        scale[j] = signedMax(x + j * subBlock, subBlock) / -static_cast<float>(zero);
        maxAbs = std::max(maxAbs, std::fabs(scale[j]));
    }
    const float d = putHalf(dOut, maxAbs / static_cast<float>(maxScale));
    for (int j = 0; j < count; ++j) {
        scales[j] = d > 0.0f ? roundClamped(scale[j] / d, -maxScale, maxScale) : 0;
        const float step = d * static_cast<float>(scales[j]);
        for (int i = 0; i < subBlock; ++i) {
            const float v = x[j * subBlock + i];
            codes[j * subBlock + i] = static_cast<std::uint8_t>(
                step != 0.0f ? roundClamped(v / step, -zero, zero - 1) + zero : zero);
        }
    }
}

// Q4_K / Q5_K's eight 6-bit scales and mins in 12 bytes (see scaleAndMin in TensorType.cpp).
void packScalesAndMins(const std::uint8_t* scales, const std::uint8_t* mins, std::uint8_t* out) {
    for (int j = 0; j < 4; ++j) {
        out[j] = static_cast<std::uint8_t>((scales[j] & 63) | ((scales[j + 4] >> 4) << 6));
        out[j + 4] = static_cast<std::uint8_t>((mins[j] & 63) | ((mins[j + 4] >> 4) << 6));
        out[j + 8] = static_cast<std::uint8_t>((scales[j + 4] & 15) | ((mins[j + 4] & 15) << 4));
    }
}

// The 2-bit fields of Q2_K / Q3_K: element e of a super-block sits in byte 32 (e / 128) +
// e % 32 at bit 2 ((e % 128) / 32).
void packCrumbs(const std::uint8_t* codes, std::uint8_t* qs) {
    std::memset(qs, 0, 64);
    for (int e = 0; e < kSuperBlock; ++e)
        qs[32 * (e / 128) + e % 32] |=
            static_cast<std::uint8_t>((codes[e] & 3) << (2 * ((e % 128) / 32)));
}

} // namespace

int nearestIq4NlLevel(float v) {
    int best = 0;
    for (int q = 1; q < 16; ++q)
        if (std::fabs(v - kIq4NlLevels[q]) < std::fabs(v - kIq4NlLevels[best])) best = q;
    return best;
}

void quantizeQ2_K(const float* x, std::uint8_t* out) {
    std::uint8_t codes[kSuperBlock], scales[16], mins[16];
    asymmetric(x, 16, 3, 15, out + 80, codes, scales, mins);
    for (int j = 0; j < 16; ++j) out[j] = static_cast<std::uint8_t>(scales[j] | (mins[j] << 4));
    packCrumbs(codes, out + 16);
}

void quantizeQ3_K(const float* x, std::uint8_t* out) {
    std::uint8_t codes[kSuperBlock];
    int scales[16];
    symmetric(x, 16, 4, 31, out + 108, codes, scales);
    std::uint8_t* hmask = out;
    std::memset(hmask, 0, 32);
    for (int e = 0; e < kSuperBlock; ++e)
        if (codes[e] & 4)
            hmask[e % 32] |= static_cast<std::uint8_t>(1 << (4 * (e / 128) + (e % 128) / 32));
    packCrumbs(codes, out + 32);
    // Scale j, stored plus 32: low nibble in byte j % 8 (low half for j < 8), top two bits
    // in byte 8 + j % 4 at bit 2 (j / 4).
    std::uint8_t* packed = out + 96;
    std::memset(packed, 0, 12);
    for (int j = 0; j < 16; ++j) {
        const int v = scales[j] + 32;
        packed[j % 8] |= static_cast<std::uint8_t>((v & 15) << (j < 8 ? 0 : 4));
        packed[8 + j % 4] |= static_cast<std::uint8_t>((v >> 4) << (2 * (j / 4)));
    }
}

void quantizeQ4_K(const float* x, std::uint8_t* out) {
    std::uint8_t codes[kSuperBlock], scales[8], mins[8];
    asymmetric(x, 32, 15, 63, out, codes, scales, mins);
    packScalesAndMins(scales, mins, out + 4);
    // Sub-blocks 2c and 2c + 1 share bytes 32c ... 32c + 31: low and high nibbles.
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l)
            out[16 + 32 * c + l] =
                static_cast<std::uint8_t>(codes[64 * c + l] | (codes[64 * c + 32 + l] << 4));
}

void quantizeQ5_K(const float* x, std::uint8_t* out) {
    std::uint8_t codes[kSuperBlock], scales[8], mins[8];
    asymmetric(x, 32, 31, 63, out, codes, scales, mins);
    packScalesAndMins(scales, mins, out + 4);
    std::uint8_t* qh = out + 16;
    std::memset(qh, 0, 32);
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            const int low = codes[64 * c + l], high = codes[64 * c + 32 + l];
            out[48 + 32 * c + l] = static_cast<std::uint8_t>((low & 15) | ((high & 15) << 4));
            // Fifth bit of element l of sub-block s: bit s of qh[l].
            qh[l] |=
                static_cast<std::uint8_t>(((low >> 4) << (2 * c)) | ((high >> 4) << (2 * c + 1)));
        }
}

void quantizeQ6_K(const float* x, std::uint8_t* out) {
    std::uint8_t codes[kSuperBlock];
    int scales[16];
    symmetric(x, 16, 32, 127, out + 208, codes, scales);
    std::uint8_t* ql = out;
    std::uint8_t* qh = out + 128;
    std::memset(out, 0, 192);
    for (int e = 0; e < kSuperBlock; ++e) {
        const int half = e / 128, group = (e % 128) / 32, l = e % 32;
        const int q = codes[e];
        ql[64 * half + l + ((group & 1) ? 32 : 0)] |=
            static_cast<std::uint8_t>((q & 15) << ((group & 2) ? 4 : 0));
        qh[32 * half + l] |= static_cast<std::uint8_t>((q >> 4) << (2 * group));
    }
    for (int j = 0; j < 16; ++j)
        out[192 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(scales[j]));
}

void quantizeIQ4_XS(const float* x, std::uint8_t* out) {
    float scale[8];
    float maxAbs = 0.0f;
    for (int b = 0; b < 8; ++b) {
        scale[b] = signedMax(x + 32 * b, 32) / static_cast<float>(kIq4NlLevels[0]);
        maxAbs = std::max(maxAbs, std::fabs(scale[b]));
    }
    const float d = putHalf(out, maxAbs / 31.0f);
    std::uint16_t scalesHigh = 0;
    std::uint8_t* scalesLow = out + 4;
    std::memset(scalesLow, 0, 4);
    for (int b = 0; b < 8; ++b) {
        const int ls = (d > 0.0f ? roundClamped(scale[b] / d, -32, 31) : 0) + 32;
        scalesLow[b / 2] |= static_cast<std::uint8_t>((ls & 15) << (4 * (b % 2)));
        scalesHigh = static_cast<std::uint16_t>(scalesHigh | ((ls >> 4) << (2 * b)));
        const float step = d * static_cast<float>(ls - 32);
        std::uint8_t* qs = out + 8 + 16 * b;
        for (int j = 0; j < 16; ++j) {
            const int low = step != 0.0f ? nearestIq4NlLevel(x[32 * b + j] / step) : 8;
            const int high = step != 0.0f ? nearestIq4NlLevel(x[32 * b + j + 16] / step) : 8;
            qs[j] = static_cast<std::uint8_t>(low | (high << 4));
        }
    }
    out[2] = static_cast<std::uint8_t>(scalesHigh);
    out[3] = static_cast<std::uint8_t>(scalesHigh >> 8);
}

} // namespace inferscope::models::superblocks
