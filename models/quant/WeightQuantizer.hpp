#pragma once
// Weight quantization schemes of the chapter (DESIGN.md item 8), host side: a packer from an
// f32 matrix (rows x cols, row-major) to the packed bytes a GPU kernel reads, and a host
// dequantizer that is the reference for that kernel.
//
// Conventions shared by every scheme:
// - All multi-byte values are little-endian. Elements are numbered in row-major order,
//   e = row * cols + col, and groups/blocks are runs of consecutive elements in that order
//   (the last one may be shorter). A group can straddle two rows: this keeps
//   "4 + 16/128 = 4.125 bits" exact for matrices whose rows are not a multiple of the group
//   (SmolLM2's 576), and a shader finds a group as e / groupSize.
// - Scales are IEEE fp16, rounded *up* from absmax / qmax, so the largest weight maps inside
//   [-qmax, qmax] and |w - w^| <= scale / 2 holds for every weight, clamping never happens.
// - Symmetric integer schemes follow the chapter: qmax = 2^(bits-1) - 1, scale = absmax / qmax,
//   q = round(w / scale) (half to even), w^ = q * scale. INT8 uses -127..127, INT4 uses -7..7:
//   the chapter's clamp lower bound -qmax-1 (-128, -8) is never reached because the scale
//   maps absmax onto qmax exactly; the grid stays symmetric with an exact zero.
// - 4-bit codes are packed two per byte: element e sits in byte e / 2, in the low nibble when
//   e is even, the high nibble when odd. INT4 stores the unsigned code q + 8 (1..15; a
//   dequantizer must read code c as (c - 8) * scale, so 0 would be -8); NF4 stores the index
//   of its level (0..15).
// - Packed bytes = [codes][scales]: the codes of all elements first, then the scale array,
//   with no padding, so bits per weight = 8 * bytes / elements is what the scheme really costs.
//   The scale array starts at byte codeBytes; it is 4-byte aligned when elements is a
//   multiple of 8 (4-bit) or 4 (8-bit), which every real model shape satisfies.
#include "models/WeightStore.hpp"
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::models {

enum class QuantScheme {
    Fp32,          // f32 as is
    Fp16,          // IEEE half, round to nearest even
    Int8PerTensor, // int8 codes, one fp16 scale for the whole matrix
    Int8PerRow,    // int8 codes, one fp16 scale per output row
    Int4PerTensor, // 4-bit codes, one fp16 scale
    Int4PerRow,    // 4-bit codes, one fp16 scale per output row
    Int4PerGroup,  // 4-bit codes, one fp16 scale per group of `groupSize` consecutive weights
    Nf4,           // 4-bit NF4 level indices, one fp16 absmax per block of `groupSize` weights
    AsStored,      // the file's own bytes (F32/F16/BF16/Q8_0/Q4_0/Q4_1/K-quants), unchanged
};

struct QuantSchemeSpec {
    QuantScheme scheme = QuantScheme::Fp32;
    std::uint32_t groupSize = 0; // Int4PerGroup and Nf4 only (group / block length)

    // "fp32", "fp16", "int8-tensor", "int8-row", "int4-tensor", "int4-row", "int4-g128",
    // "nf4-b64", "as-stored".
    std::string name() const;
    bool operator==(const QuantSchemeSpec&) const = default;
};

// Parses a name as printed by name(); also "int4-group" (= g128), "nf4" (= b64). Throws
// std::invalid_argument listing the accepted names.
QuantSchemeSpec parseQuantScheme(std::string_view name);
// The chapter's rows, in its order: fp32, fp16, int8-tensor, int8-row, int4-tensor,
// int4-row, int4-g128, int4-g64 (NF4's block size, to separate block size from level
// placement), nf4-b64, as-stored.
std::vector<QuantSchemeSpec> standardQuantSchemes();

struct PackedMatrix {
    QuantSchemeSpec scheme;
    std::uint64_t rows = 0;
    std::uint64_t cols = 0;
    TensorType storedType = TensorType::F32; // AsStored: the file's type; otherwise unused
    std::vector<std::uint8_t> bytes;
    std::string layout; // the byte layout in words, for the panel and for shader authors

    std::uint64_t elements() const { return rows * cols; }
    double bitsPerWeight() const;
};

// Bytes the packed form of a rows x cols matrix takes (exactly bytes.size() after packing).
// Not defined for AsStored (the file decides); throws std::invalid_argument then.
std::uint64_t packedByteCount(const QuantSchemeSpec& spec, std::uint64_t rows, std::uint64_t cols);

// Packs weights (rows * cols floats, row-major). Throws std::invalid_argument for AsStored,
// a zero group size, a size mismatch, or non-finite weights; std::range_error if a scale
// does not fit in fp16.
PackedMatrix packMatrix(const QuantSchemeSpec& spec, std::span<const float> weights,
                        std::uint64_t rows, std::uint64_t cols);
// AsStored: copies the tensor's bytes as they are in the file (a matrix: 2 dims).
PackedMatrix packStoredMatrix(const StoredTensor& tensor);
// Packs with `spec`, or the stored bytes when spec is AsStored.
PackedMatrix packTensor(const QuantSchemeSpec& spec, const StoredTensor& tensor,
                        std::span<const float> dequantized);

// Host dequantizer: the reference result for a shader reading the same bytes.
void dequantizeMatrix(const PackedMatrix& packed, std::span<float> out);
std::vector<float> dequantizeMatrix(const PackedMatrix& packed);

// fp16 bits of the smallest half >= value (value >= 0); std::range_error above 65504.
std::uint16_t halfRoundedUp(float value);

} // namespace inferscope::models
