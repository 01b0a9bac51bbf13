#pragma once
// GPU layouts of the quantization lab's schemes (models/WeightQuantizer) and of the GGUF
// block types, built from the same quantized codes the host packers produce (for GGUF types:
// the file's own codes and scales), so the host dequantizer and the shaders compute with
// exactly the same values. Q4_0 / Q4_1 / Q8_0 are laid out below; the other GGUF types in
// the planes layout of compute/formats/GgmlPlanes.hpp; bf16 as f16's rows.
//
// Every layout is [codes][scales] in 32-bit words, zero-padded to a whole number of four-word
// texels (the kernels read four words per fetch). The codes sit at the padded element index
// e = row * stride + col (stride = paddedColumns(cols)); padding holds the code of 0.
// uploadPacked may reorder the code rows for the device (compute/formats/DeviceCodeLayout.hpp);
// the scales keep this layout. The scales start at word formatWords:
//   int8-tensor, int8-row, int4-tensor, int4-row: one fp16 per row, two per word (per-tensor
//     rows repeat their tensor's scale: a fused matrix such as Q|K|V keeps one scale per
//     source tensor, as the lab quantizes them);
//   int4-g128, int4-g64, nf4: the host's scale array unchanged (one fp16 per group of
//     consecutive *logical* elements, groups may cross rows), two per word, then a few zero
//     words so a padding column's group index stays inside the buffer; the shader maps the
//     padded index back to the logical one (only when stride != cols);
//   q4_0: one fp16 d per 32-element block of the padded row, two per word;
//   q4_1: one word per block, d in the low half and m in the high half;
//   q8_0: int8 codes, one f32 scale per 32-element block of the padded row;
//   f32, f16, bf16: the values, rows padded with zeros (two halves per word).
#include "compute/formats/RowChunkedMatrix.hpp"
#include "compute/formats/WeightFormat.hpp"
#include "models/WeightStore.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute {

// One source tensor of a (possibly fused) matrix: `rows` rows of the matrix's columns, as
// f32 values, or as the file's bytes (`stored`, used by the GGUF block formats when its type
// is the format's: the GPU then reads exactly the file's codes and scales).
struct MatrixPart {
    std::span<const float> values; // may be empty when `stored` is set
    std::uint32_t rows = 0;
    const models::StoredTensor* stored = nullptr;
};

// Rows [firstRow, firstRow + out.size() / cols) of a part's f32 values: copied from its
// values, or dequantized from just those rows' stored blocks (a stored row is whole blocks).
void partRowValues(const MatrixPart& part, std::uint32_t cols, std::uint32_t firstRow,
                   std::span<float> out);

// A matrix in its GPU layout, on the host.
struct GpuPackedMatrix {
    WeightFormat format = WeightFormat::F32;
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t stride = 0;
    std::uint32_t formatWords = 0;
    bool alignedGroups = false; // group formats with cols % 64 == 0 (see DeviceMatrix)
    std::vector<std::uint32_t> words;
};

// Packs the parts (stacked in order) into `format` with the format's packer (its
// WeightFormatInfo::packer); throws ComputeError for a shape the format cannot hold (Q4_0 /
// Q4_1 / Q8_0 from stored bytes need cols % 32 == 0; group formats need cols % 4 == 0 and
// every part but the last a whole number of groups) and for AsStored.
// The lab's schemes pack a part about `slabValues` values at a time (dequantized per slab
// from stored bytes); any slab size gives the same words.
GpuPackedMatrix packForGpu(WeightFormat format, std::span<const MatrixPart> parts,
                           std::uint32_t cols, std::uint64_t slabValues = 1u << 20);
// F32 / F16: rows of `cols` values (values.size() / cols rows), each padded to
// paddedColumns(cols); plainRowWords(format, cols) words per row.
std::vector<std::uint32_t> packPlainRows(WeightFormat format, std::span<const float> values,
                                         std::uint32_t cols);
std::uint64_t plainRowWords(WeightFormat format, std::uint32_t cols);
// The size of a matrix of `rows` x `cols` in `format`'s layout, as packForGpu builds it (and
// stackPackedRows for a chunk of that many rows): the word where the scales start (0 for
// plain floats) and all words. The packers size their arrays with it, so an estimate that
// calls it (LoadFootprint) follows any change of a layout. Throws ComputeError for AsStored.
struct PackedMatrixSize {
    std::uint64_t formatWords = 0;
    std::uint64_t words = 0;
    std::uint64_t bytes() const { return words * 4; }
};
PackedMatrixSize packedMatrixSize(WeightFormat format, std::uint32_t rows, std::uint32_t cols);
// Uploads the layout with its codes in the device order of rowBlock (default: codeRowBlockFor
// the context's device and the row count; compute/formats/DeviceCodeLayout.hpp). Throws
// ComputeError for a row block that does not divide the rows.
// laneOrder: also a copy of the scales in that kernel's slot order after the layout
// (packLaneScales; DeviceMatrix::laneScaleWords), where the matrix takes one
// (takesLaneScales), else ignored.
DeviceMatrix uploadPacked(const VulkanContext& context, const GpuPackedMatrix& packed,
                          const std::string& label,
                          std::optional<std::uint32_t> rowBlock = std::nullopt,
                          const LaneScaleOrder* laneOrder = nullptr);
// Bits per code of `format`'s layout: 32 (f32), 16 (f16), 8 or 4.
std::uint32_t codeBitsPerWeight(WeightFormat format);

// A matrix of the given row ranges of `source`, stacked in order, in the same layout: the
// same codes and scales (nothing is re-quantized, so a per-tensor scale survives a split).
// Lets a matrix larger than one storage binding live as row chunks, and a fused gate|up
// chunk hold gate rows [a, b) followed by up rows [a, b). Group formats need every range to
// start on a group boundary, and every range but the last to end on one
// (packedRowGranule); throws ComputeError otherwise.
GpuPackedMatrix stackPackedRows(const GpuPackedMatrix& source, std::span<const RowRange> ranges);
// The smallest row count r such that r rows of `cols` weights are a whole number of the
// format's scale groups (1 for formats without cross-row groups).
std::uint32_t packedRowGranule(WeightFormat format, std::uint32_t cols);
// The row chunks (in output rows) the engine splits a matrix into so each chunk fits in
// `limitBytes` (one storage binding): plain floats by whole rows, packed layouts from the
// whole packed size with a little slack for the scales' padding words. rowGranule keeps
// whole heads together; gateUpPairs: each output row is a gate row and an up row (`rows`
// counts both). One range when the whole matrix fits. Throws ComputeError naming `what`.
std::vector<RowRange> planMatrixChunks(WeightFormat format, std::uint32_t rows, std::uint32_t cols,
                                       std::uint64_t limitBytes, std::uint32_t rowGranule,
                                       bool gateUpPairs, const std::string& what);
// The bytes of a matrix split by planMatrixChunks, each chunk in its own buffer.
std::uint64_t chunkedMatrixBytes(WeightFormat format, std::uint32_t cols,
                                 std::span<const RowRange> chunks, bool gateUpPairs);

// The values the GPU computes with for one source tensor in `format` (the host reference):
// f32 as is, f16 rounded, models::dequantizeMatrix of models::packMatrix for the lab schemes,
// the GGUF dequantizer for the block types (of the stored bytes when `stored` has that type).
std::vector<float> referenceDequantized(WeightFormat format, std::span<const float> values,
                                        std::uint32_t rows, std::uint32_t cols,
                                        const models::StoredTensor* stored = nullptr);

// Packed by the lab's quantizer (WeightPacker::LabScheme: the int8 / int4 / nf4 schemes).
bool isLabScheme(WeightFormat format);
// The GGUF type whose bytes a format reads as stored (every supported type has one).
bool formatReadsStoredType(WeightFormat format, models::TensorType type);
// The GPU format that reads a stored type's bytes as they are ("as stored"); every type the
// reader supports has one (throws ComputeError otherwise).
WeightFormat formatForStoredType(models::TensorType type);
// The format a matrix made of the tensors `names` gets for the requested `format`: the format
// itself, or for AsStored the format of the parts' common stored type (f16 for parts stored
// differently or missing; f32 without a store: substituted host weights are f32). A fused
// matrix whose parts differ is laid out by planMatrixSections instead.
WeightFormat resolveWeightFormat(const models::WeightStore* store,
                                 const std::vector<std::string>& names, WeightFormat format);

// One run of a fused matrix's parts that take the same GPU format, uploaded as row chunks of
// its own: as stored, the parts of a mixed file (attn_v in Q6_K or Q8_0 beside attn_q and
// attn_k in Q4_K or Q5_0) each read their own stored type. The kernels run once per chunk,
// told the row it starts at, so a section is just more chunks of the same matrix.
struct MatrixSection {
    WeightFormat format = WeightFormat::F16;
    std::vector<std::size_t> parts; // indices into the names, consecutive
    std::uint32_t firstRow = 0;     // output rows before the section (gate|up: gate rows)
    std::uint32_t rows = 0;         // stored rows (gate|up: gate and up)
    std::vector<RowRange> chunks;   // planMatrixChunks of the section, its own output rows
};
// The sections of the matrix of `names` (partRows: each part's rows, in order) for the
// requested format: one section but for AsStored with parts whose stored types take different
// formats, then one per run of parts of one format. Each part starts on a whole granule
// (rowGranule: whole heads) or the sections fall back to one f16 section, as do gate|up pairs
// whose gate and up differ (the ffn_gateup kernel pairs a gate row with its up row in one
// lane; no preset of llama.cpp's quantizer stores them differently).
std::vector<MatrixSection> planMatrixSections(const models::WeightStore* store,
                                              const std::vector<std::string>& names,
                                              std::span<const std::uint32_t> partRows,
                                              WeightFormat format, std::uint32_t cols,
                                              std::uint64_t limitBytes, std::uint32_t rowGranule,
                                              bool gateUpPairs, const std::string& what);

} // namespace inferscope::compute
