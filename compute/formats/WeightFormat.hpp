#pragma once
// How a weight matrix is stored on the GPU, and the one table of weight formats
// (compute/formats/WeightFormatTable.def): each row names the format (the one name the CLI, the
// GUI and JSON use), its bits per weight, its host packer, its shader include
// (shaders/dequant_<shader>.glsl, from which the build generates every matrix kernel for it) and
// the lab quantizer (models/WeightQuantizer) that computes the same values. A new format is one
// row there, one packer and one include; nothing else changes.
#include "compute/vulkan/Buffer.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace inferscope::compute {

enum class WeightFormat {
    F32,
    F16,
    BF16,
    Q8_0, // blocks of 32 signed bytes sharing one f32 scale (absmax / 127): 9 bits per weight
    // The quantization lab's schemes (models/WeightQuantizer, fp16 scales; layouts in
    // compute/formats/GpuWeightPacking.hpp) and the GGUF 4-bit block types.
    Int8Tensor, // int8 codes, one scale per source tensor
    Int8Row,    // int8 codes, one scale per output row
    Int4Tensor, // 4-bit codes q + 8, one scale per source tensor
    Int4Row,
    Int4G128, // one scale per 128 consecutive weights
    Int4G64,
    Nf4,  // NF4 level indices, one absmax per 64 consecutive weights
    Q4_0, // GGUF blocks of 32, (q - 8) * d
    Q4_1, // GGUF blocks of 32, q * d + m
    // The other GGUF block types (compute/formats/GgmlPlanes.hpp): 5-bit blocks of 32, the
    // IQ4_NL codebook, the K-quant super-blocks of 256 and IQ4_XS.
    Q5_0,
    Q5_1,
    IQ4_NL,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
    IQ4_XS,
    // Not a GPU layout: the engine picks, per matrix, the format of the file's own type
    // (each stored type has a format that reads its bytes; a fused matrix whose parts are
    // stored in different types takes one row chunk per part, each in its part's format).
    AsStored,
};

// How a format's host packer builds its layout (compute/formats/GpuWeightPacking.hpp).
enum class WeightPacker {
    Float32,    // f32 rows
    Float16,    // 16-bit float rows: fp16 (models/HalfFloat), or bf16 for WeightFormat::BF16
    LabScheme,  // models::packMatrix with the row's labScheme, re-laid out for the kernels
    GgmlBlocks, // GGUF blocks of the row's storedType: the file's bytes, or quantized from f32
                // (Q4_0 / Q4_1 / Q8_0 here, the others in compute/formats/GgmlPlanes.hpp)
    PerMatrix,  // AsStored: each matrix takes the format of its stored type
};

struct WeightFormatInfo {
    WeightFormat format;
    std::string_view name;   // the one name: CLI --format / --scheme, GUI, JSON, tables
    std::string_view alias;  // an older spelling still accepted on input ("" if none)
    std::string_view shader; // shaders/dequant_<shader>.glsl; kernels "matvec_<shader>", ...
    // Bits per weight including scales, for rows whose length is a multiple of the group;
    // the per-row and per-tensor formats add rowScaleBits per row (one fp16 scale) on top.
    double bitsPerWeight;
    double rowScaleBits;
    WeightPacker packer;
    // The lab quantizer whose host dequantizer gives exactly the values the kernels use
    // (the same scheme); none for the GGUF block types, which models::quantizeGgml and
    // models::quantizeQ8_0Block quantize.
    std::optional<models::QuantSchemeSpec> labScheme;
    // The stored tensor type whose file bytes this format reads unchanged ("as stored").
    std::optional<models::TensorType> storedType;
    // Kernels also built with ALIGNED_GROUPS (suffix "_aligned"), read when every row is a
    // whole number of groups (DeviceMatrix::alignedGroups).
    bool alignedVariant;
    // The kernel (its "_aligned" variant where there is one) reads whole words of 4-bit codes
    // (WEIGHT_NIBBLES in shaders/matvec_core.glsl), the path that can take int8 activations
    // (Kernels::roundsActivations; the int8 kernel test runs every format marked here).
    bool int8ActivationPath;

    // Bits per weight of a matrix with rows of `cols` weights (scales included).
    double bitsForRows(std::uint32_t cols) const {
        return bitsPerWeight + (cols ? rowScaleBits / cols : 0.0);
    }
};

// Every row of the table: the GPU layouts in the chapter's order, then AsStored.
std::span<const WeightFormatInfo> weightFormatTable();
const WeightFormatInfo& weightFormatInfo(WeightFormat format);
// The row named `name` (its canonical name or its alias); nullptr for an unknown name.
const WeightFormatInfo* findWeightFormat(std::string_view name);
// The canonical names, comma-separated (for error messages).
std::string weightFormatNames();

// Every GPU layout (AsStored excluded), in the chapter's order.
std::span<const WeightFormat> allWeightFormats();
// weightFormatInfo(format).shader.
std::string_view weightFormatShaderSuffix(WeightFormat format);

// weightFormatInfo(format).name: "fp32", "fp16", "q8_0", "int8-tensor", ..., "nf4-b64",
// "as-stored" (the lab scheme's name where the format is a lab scheme).
std::string_view weightFormatName(WeightFormat format);
// The format with that name or alias (e.g. "f16" for fp16, "nf4" for nf4-b64).
std::optional<WeightFormat> weightFormatFromName(std::string_view name);
// Rows (of weights and of activations) are zero-padded to a multiple of 64 elements, so
// every kernel variant can step through them in whole chunks (e.g. 4 x 16 lanes).
constexpr std::uint32_t kColumnPadding = 64;
inline std::uint32_t paddedColumns(std::uint32_t cols) {
    return (cols + kColumnPadding - 1) / kColumnPadding * kColumnPadding;
}

// A row-major [rows][cols] matrix on the GPU, each row zero-padded to `stride` elements.
// The kernel whose slot order a matrix's lane-scale copy follows (the weightRow of its body;
// compute/formats/LaneScaleLayout.hpp).
enum class SlotRowOrder : std::uint32_t {
    None = 0,    // no copy
    Plain,       // matvec: slot q reads row q
    GateUpPairs, // ffn_gateup: slot 2i reads gate row i, 2i + 1 up row i + rows / 2
    RopePairs,   // qkv_rope: slots 2i and 2i + 1 read the two rows of RoPE pair i
};
struct LaneScaleOrder {
    SlotRowOrder order = SlotRowOrder::None;
    std::uint32_t headDim = 0; // RopePairs: rows per head ...
    bool splitHalf = false;    // ... and pairs (j, j + headDim / 2) instead of (2j, 2j + 1)
    bool operator==(const LaneScaleOrder&) const = default;
};

struct DeviceMatrix {
    Buffer buffer;
    WeightFormat format = WeightFormat::F32;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t stride = 0;
    std::uint32_t formatWords = 0; // block formats: the word where the scales start
    // Group formats: rows of a multiple of 64 weights (no padding, groups aligned to the
    // kernels' chunks), read by the "_aligned" shader variants.
    bool alignedGroups = false;
    // The codes' device order (compute/formats/DeviceCodeLayout.hpp): 0 row-major, else
    // interleaved in blocks of this many rows (the kernels specialize on it).
    std::uint32_t rowBlock = 0;
    // Int4 group formats and q4_1 on CPU devices: the word where a copy of the scales in the slot
    // order of laneScaleOrder's kernel starts (compute/formats/LaneScaleLayout.hpp), 0: none.
    std::uint32_t laneScaleWords = 0;
    LaneScaleOrder laneScaleOrder;
    std::uint64_t bytes() const { return buffer.size(); }
    // What the kernels read of the buffer per pass: all of it, but for the packed scales where
    // they read the lane-scale copy instead (the copy exists only where they do).
    std::uint64_t bytesRead() const {
        return laneScaleWords ? bytes() - 4ull * (laneScaleWords - formatWords) : bytes();
    }
};

// The shader name suffix of the kernels that read this matrix.
std::string matrixShaderSuffix(const DeviceMatrix& matrix);

// Packs f32 rows into `format` and uploads them, the codes in the device order of rowBlock
// (default: codeRowBlockFor the context's device and the row count).
DeviceMatrix uploadMatrix(const VulkanContext& context, std::span<const float> values,
                          std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                          const std::string& label,
                          std::optional<std::uint32_t> rowBlock = std::nullopt);
// F32 / F16 only: the same, with the rows asked for a slice at a time (`fillRows(first, out)`
// writes rows [first, first + out.size() / cols)), so a large table is never whole in f32.
using MatrixRowSource = std::function<void(std::uint32_t firstRow, std::span<float> out)>;
DeviceMatrix uploadPlainMatrixRows(const VulkanContext& context, const MatrixRowSource& fillRows,
                                   std::uint32_t rows, std::uint32_t cols, WeightFormat format,
                                   const std::string& label,
                                   std::optional<std::uint32_t> rowBlock = std::nullopt);

// The values the GPU will compute with after packing into `format` (for CPU oracles):
// f16 rounding, or Q8_0 quantization and back. Rows of `cols` values.
std::vector<float> roundTripWeights(std::span<const float> values, std::uint32_t cols,
                                    WeightFormat format);

// A vector of floats zero-padded to a multiple of kColumnPadding (norm weights, biases,
// frequencies); uploadedVectorBytes(values) bytes.
std::uint64_t uploadedVectorBytes(std::uint64_t values);
Buffer uploadVector(const VulkanContext& context, std::span<const float> values,
                    const std::string& label);

} // namespace inferscope::compute
