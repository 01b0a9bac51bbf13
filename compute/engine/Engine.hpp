#pragma once
// The GPU transformer: weights uploaded once, a paged KV cache, and one call, step(batch),
// that serves prefill chunks and decode steps for any number of sequences at once
// (DESIGN.md: one engine path for B=1 and B>1). Per layer it records five fused dispatches:
//   qkv_rope   RMSNorm + Q/K/V projection (+bias) + RoPE + K/V written into the cache
//   attention  causal GQA over the sequence's cache blocks
//   attn_out   output projection added into the residual stream
//   ffn_gateup RMSNorm + gate and up projections + SwiGLU
//   ffn_down   down projection added into the residual stream (+ residual max |h| probe)
// plus the embedding lookup, the final norm + output head, and argmax per step.
#include "compute/engine/KernelTime.hpp"
#include "compute/engine/Kernels.hpp"
#include "compute/engine/KvCache.hpp"
#include "compute/formats/RowChunkedMatrix.hpp"
#include "compute/formats/WeightFormat.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelConfig.hpp"
#include "models/reference/OperationCounts.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute {

struct MatrixSection; // compute/formats/GpuWeightPacking.hpp

struct ProbeOptions {
    bool kernelTimings = false; // timestamp after every dispatch (serializes: a mode)
    bool residualMax = false;   // per-layer, per-dimension max |h|, reduced on the GPU
    // Every row of the residual stream after each layer, copied on the GPU into a readback
    // buffer (one transfer per layer, no dispatch): the prompt's record of chapter items 9
    // and 10. The buffer is allocated the first time, for the rows of the largest chunk.
    bool residualStream = false;
};

struct EngineOptions {
    ContextOptions device;
    // Projection matrices and the output head. A tied head doubles as the embedding table;
    // an untied model's table is f32 for F32 (and for AsStored over f32 host weights), else
    // f16: the lookup reads one row per token.
    WeightFormat weightFormat = WeightFormat::F16;
    // The output head's format where it is not weightFormat: the scheme labs quantize only
    // the projection matrices and keep the head as stored.
    std::optional<WeightFormat> headFormat;
    std::uint32_t blockSize = 16;          // KV positions per block
    std::uint32_t kvCapacityTokens = 4096; // all sequences together
    std::uint32_t maxSequences = 64;
    std::uint32_t maxContextPerSequence = 0; // 0: the model's context (capped by capacity)
    std::uint32_t maxTokensPerStep = 256;    // larger batches run as several submissions
    std::uint32_t maxLogitRowsPerStep = 64;
    bool cached = true; // false: every step recomputes each sequence from position 0
    ProbeOptions probes;
    std::optional<KernelTuning> tuning; // else picked from the device
    // 4-bit formats on lavapipe: activations rounded to 8 bits per 32 columns and integer
    // products, as llama.cpp's CPU backend computes them (Kernels::roundsActivations says
    // where it applies; elsewhere the kernels keep float activations).
    bool int8Activations = false;
    // Every row's result independent of the rows stepped beside it (a served request gets the
    // tokens it gets alone): KernelTuning::batchInvariant. Costs prefill and wide-batch speed
    // on the block formats; `serve --batch-invariant` measures it.
    bool batchInvariant = false;
    // Largest buffer per weight matrix; larger ones are split into row chunks. 0: the
    // device's limits (maxStorageBufferRange, maxMemoryAllocationSize); tests force splits.
    std::uint64_t maxMatrixChunkBytes = 0;
};

// One sequence's part of a step: its new tokens (a prompt chunk, or one decoded token).
struct SequenceInput {
    SequenceId sequence = 0;
    std::vector<std::int32_t> tokens;
};

struct SequenceOutput {
    SequenceId sequence = 0;
    std::uint32_t length = 0;         // positions in the sequence after this step
    std::vector<float> logits;        // rows of vocab: last position, or every new one
    std::vector<std::int32_t> argmax; // one per row of logits
};

struct StepProbes {
    std::uint32_t prefillTokens = 0; // tokens of sequences that received more than one
    std::uint32_t decodeTokens = 0;  // tokens of sequences that received exactly one
    std::uint32_t dispatches = 0;
    std::uint32_t transfers = 0; // copies and fills recorded besides the dispatches
    std::uint32_t submissions = 0;
    double wallMicroseconds = 0.0;
    double gpuMicroseconds = 0.0;    // sum of fence waits (submit to signal)
    std::vector<KernelTime> kernels; // with ProbeOptions::kernelTimings
    // With ProbeOptions::residualMax: [layer][dimension] max |h| over this step's tokens.
    std::vector<std::vector<float>> residualMax;
    // With ProbeOptions::residualStream: [layer][row][hiddenSize], every row this step ran,
    // in the step's order (for one sequence: its positions from the first one not cached).
    std::vector<float> residualStream;
    std::uint32_t residualStreamRows = 0;
    // The KV cache's own per-layer accounting after the step (before an uncached step drops
    // its positions again): bytes written, and bytes of the blocks handed out.
    std::vector<std::uint64_t> kvUsedBytesByLayer, kvAllocatedBytesByLayer;
    // Multiply-accumulates of the rows this step ran (chapter item 2), counted row by row
    // from what was scheduled: every row through every layer's matrices, its attention over
    // the positions up to its own, and the output head for the rows whose logits were made.
    models::MacCount macs;
};

struct StepResult {
    std::vector<SequenceOutput> sequences; // in batch order
    StepProbes probes;
};

// One weight matrix on the GPU (fused ones count once), for bits per weight.
struct WeightMatrixInfo {
    std::string name; // "blk.0.attn_qkv", "output", ...
    WeightFormat format = WeightFormat::F16;
    std::uint64_t parameters = 0;   // rows x cols, without padding
    std::uint64_t bytes = 0;        // the GPU buffers
    std::uint64_t bytesRead = 0;    // what the kernels read of them per pass (DeviceMatrix)
    std::uint32_t chunks = 1;       // row chunks (buffers), each within one storage binding
    bool roundsActivations = false; // int8 activations (EngineOptions::int8Activations)
    double bitsPerWeight() const {
        return parameters ? 8.0 * double(bytes) / double(parameters) : 0;
    }
};

struct EngineMemory {
    std::uint64_t weightBytes = 0;
    std::uint64_t kvReservedBytes = 0; // the KV buffers of every layer (their real sizes)
    std::uint64_t kvAllocatedBytes = 0;
    std::uint64_t kvUsedBytes = 0;
    std::uint64_t activationBytes = 0;
    std::uint64_t deviceBytes = 0;     // everything this engine allocated
    std::uint64_t peakDeviceBytes = 0; // since construction or resetPeak()
    std::uint64_t peakWithoutWeights() const {
        return peakDeviceBytes > weightBytes ? peakDeviceBytes - weightBytes : 0;
    }
    // What the work needed at its peak since construction or resetPeakMemory(), as opposed to
    // what was reserved up front (every buffer above is allocated once, at its largest): KV
    // blocks handed out at the end of the fullest step (an uncached step holds the whole
    // sequence until it ends), and activation rows of the largest chunk, each row holding its
    // hidden state, queries, attention output, FFN intermediate, token id and position.
    std::uint64_t peakKvAllocatedBytes = 0;
    std::uint32_t peakActivationRows = 0;
    std::uint64_t activationBytesPerRow = 0;
    std::uint64_t peakInUseWithoutWeights() const {
        return peakKvAllocatedBytes + std::uint64_t(peakActivationRows) * activationBytesPerRow;
    }
};

// What an engine allocates besides its weights, from the model's shape, the options and the
// device's binding limit: the constructor allocates exactly these buffers, and LoadFootprint
// estimates a load from the same plan before anything is built.
struct EngineBufferPlan {
    std::uint32_t blockSize = 0;
    std::uint32_t capacityBlocks = 0; // KV blocks of all sequences together
    std::uint32_t maxBlocksPerSequence = 0;
    std::uint32_t maxTokensPerStep = 0;
    std::uint32_t maxLogitRowsPerStep = 0; // the option, clamped to what one binding holds
    std::uint32_t hiddenStride = 0, queryStride = 0, ffnStride = 0;
    std::uint64_t kvBytesPerLayer = 0; // one f16 K|V buffer per layer
    // The step's buffers (each at least 16 bytes): hidden, queries and attention output, FFN
    // intermediate, fused attention's arrival counters (device-local); token ids, token
    // infos, block tables, logit rows (upload); logits, argmax, residual max (readback).
    std::uint64_t hiddenBytes = 0, queryBytes = 0, attentionBytes = 0, ffnBytes = 0;
    std::uint64_t tokenIdBytes = 0, tokenInfoBytes = 0, blockTableBytes = 0, gatherBytes = 0;
    std::uint64_t logitBytes = 0, argmaxBytes = 0, residualMaxBytes = 0;
    std::uint64_t arrivalBytes = 0; // the counters of attention fused into qkv_rope
    // Sliding-window layers (ModelConfig::layerSpans): their own pool of blocks, as many as
    // every sequence's window plus a step's tokens need (at most capacityBlocks), one f16
    // K|V buffer of that size per windowed layer, and their block tables. 0 without.
    std::uint32_t windowCapacityBlocks = 0;
    std::uint64_t kvBytesPerWindowedLayer = 0;
    std::uint64_t windowBlockTableBytes = 0;
    // Q/K-norm models: the Q|K|V rows between the projection and qk_norm_rope; post-norm
    // models: a block's output before its norm joins the residual. 0 where not used.
    std::uint32_t qkvStride = 0;
    std::uint64_t qkvRowsBytes = 0, blockOutputBytes = 0;
    // Every step buffer but the logits (EngineMemory::activationBytes includes them).
    std::uint64_t scratchBytes() const {
        return hiddenBytes + queryBytes + attentionBytes + ffnBytes + tokenIdBytes +
               tokenInfoBytes + blockTableBytes + gatherBytes + argmaxBytes + residualMaxBytes +
               arrivalBytes + windowBlockTableBytes + qkvRowsBytes + blockOutputBytes;
    }
    // Every layer's KV buffers together.
    std::uint64_t kvBytes(const models::ModelConfig& config) const {
        return std::uint64_t(config.globalLayers()) * kvBytesPerLayer +
               std::uint64_t(config.windowedLayers()) * kvBytesPerWindowedLayer;
    }
};
EngineBufferPlan planEngineBuffers(const models::ModelConfig& config, const EngineOptions& options,
                                   std::uint64_t maxBindingBytes);

class Engine {
public:
    Engine(const models::LoadedModel& model, EngineOptions options = {});
    // Tests and the quantization lab substitute weights (e.g. quantized then dequantized) by
    // name; the engine keeps them for re-packing (moved in: pass an rvalue to avoid a copy).
    Engine(const models::ModelConfig& config, models::ReferenceWeights weights,
           EngineOptions options = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    StepResult step(const std::vector<SequenceInput>& batch, bool allLogits = false);
    void release(SequenceId sequence);
    // Prefix sharing (PagedAttention): `target` starts with the full KV blocks of `source`
    // (reference-counted, no copy); returns the positions shared. Feed `target` the rest of
    // its tokens from that position on.
    std::uint32_t forkSequence(SequenceId source, SequenceId target);
    void reset(); // drops every sequence
    // Keeps the first newLength positions of a sequence (history and KV blocks; whole blocks
    // past them go back to the free list). Throws std::out_of_range past its end.
    void truncate(SequenceId sequence, std::uint32_t newLength);
    // A KV cache of `tokens` positions (all sequences together) in place of the present one,
    // which is freed first: a lab that borrows the session's engine (SessionEngineLease)
    // needs only its own few positions. Drops every sequence.
    void setKvCapacity(std::uint32_t tokens);

    // Re-packs every matrix from the host weights the engine keeps (views into the model
    // file's mapping, or the substituted weights) and re-uploads it; no file is read again.
    // Drops every sequence: their cached K and V came from the old weights. `headFormat`:
    // EngineOptions::headFormat. The embedding table and the head are kept, not re-packed,
    // when their formats do not change.
    void setWeightFormat(WeightFormat format, std::optional<WeightFormat> headFormat = {});
    WeightFormat weightFormat() const { return options_.weightFormat; }
    const std::vector<WeightMatrixInfo>& weightMatrices() const { return matrixInfo_; }
    // Whether any matrix is read with int8 activations (EngineOptions::int8Activations).
    bool roundsActivations() const {
        for (const auto& m : matrixInfo_)
            if (m.roundsActivations) return true;
        return false;
    }
    // What the matrices run as, for titles and backend names: "q4_1", or
    // "q4_1, int8 activations" when roundsActivations(); for AsStored the formats the file's
    // types gave to the matrices (the embedding lookup aside), most parameters first:
    // "as-stored: q4_1 + q8_0".
    std::string weightFormatLabel() const;

    bool cached() const { return options_.cached; }
    void setCached(bool cached);
    // Switchable between steps (the serving loop asks for it while it serves): it changes
    // which kernel shapes later steps record, nothing stored.
    bool batchInvariant() const { return options_.batchInvariant; }
    void setBatchInvariant(bool invariant);
    void setProbes(const ProbeOptions& probes) { options_.probes = probes; }
    const ProbeOptions& probes() const { return options_.probes; }
    const EngineOptions& options() const { return options_; }

    const models::ModelConfig& config() const { return config_; }
    const VulkanContext& context() const { return *context_; }
    const KvCache& kvCache() const { return *kvCache_; }
    const KernelTuning& tuning() const { return kernels_->tuning(); }
    std::uint32_t sequenceLength(SequenceId sequence) const;
    EngineMemory memory() const;
    void resetPeakMemory();
    // Dispatches recorded for one decode token of one sequence (the per-token cost floor).
    std::uint32_t dispatchesPerDecodeToken() const;

private:
    using WeightSource = std::function<std::vector<float>(const std::string&)>;
    using WeightCheck = std::function<bool(const std::string&)>;
    void build(const WeightSource& weights, const WeightCheck& has);
    // The matrices of options_.weightFormat (and headFormat), replacing any others; the
    // embedding table and the head stay when keepUnchanged and their formats are the same.
    void uploadMatrices(bool keepUnchanged = false);
    // One matrix from its (stacked) source tensors, in row chunks within matrixChunkLimit():
    // chunks hold a multiple of rowGranule rows (whole heads for Q|K|V); gateUpPairs splits
    // a gate|up matrix by output row, each chunk holding its gate rows and then its up rows.
    // As stored, parts stored in types of different formats are sections of their own chunks
    // (planMatrixSections). laneOrder: the slot order of the kernel that reads the matrix, for
    // the lane-scale copy of the formats that take one where the kernels read one
    // (KernelTuning::readsLaneScales).
    RowChunkedMatrix uploadFused(const std::vector<std::string>& names, std::uint32_t cols,
                                 std::uint32_t expectedRows, WeightFormat format,
                                 const std::string& label, std::uint32_t rowGranule = 1,
                                 bool gateUpPairs = false,
                                 LaneScaleOrder laneOrder = {SlotRowOrder::Plain});
    // The chunks of one section of a matrix (its parts `names`), appended to `matrix`.
    void uploadSection(RowChunkedMatrix& matrix, const MatrixSection& section,
                       const std::vector<std::string>& names, const std::string& label,
                       bool gateUpPairs, const LaneScaleOrder& laneOrder);
    std::uint64_t matrixChunkLimit() const;
    // One matvec dispatch per row chunk of `matrix`.
    void matvecChunks(CommandRecorder& recorder, const RowChunkedMatrix& matrix, MatvecArgs args,
                      const std::string& label);
    WeightFormat resolvedFormat(const std::vector<std::string>& names, WeightFormat format) const;
    // Host weights kept for re-packing: one of the two is set.
    std::shared_ptr<const models::WeightStore> store_;
    std::shared_ptr<const models::ReferenceWeights> hostWeights_;
    std::vector<WeightMatrixInfo> matrixInfo_;
    std::uint64_t vectorBytes_ = 0;
    struct TokenRow {
        std::int32_t token;
        std::uint32_t slot;
        std::uint32_t position;
        std::int32_t logitRow; // index into the step's logits rows, or -1
    };
    StepResult runStep(const std::vector<SequenceInput>& batch, bool allLogits,
                       std::chrono::steady_clock::time_point start);
    void runChunk(std::span<const TokenRow> rows, std::size_t firstRow, std::uint32_t logitRowBase,
                  std::vector<float>& logits, std::vector<std::int32_t>& argmax, StepProbes& probes,
                  bool firstChunk);
    void uploadBlockTables(const std::vector<SequenceId>& sequences);
    // The paged cache's bookkeeping, every layer's K|V buffer, and the block tables.
    std::unique_ptr<KvCache> makeKvCache(const EngineBufferPlan& plan) const;
    void allocateKvBuffers(const EngineBufferPlan& plan);
    void allocateBlockTables(const EngineBufferPlan& plan);
    // Fresh pipelines after buffers were replaced: descriptor sets are cached by buffer
    // handle, and a new buffer may reuse a freed one's handle.
    void renewKernels();
    // Sliding-window layers: the window pool's blocks for one chunk's rows, and their tables.
    void reserveWindow(std::span<const TokenRow> rows, const std::vector<SequenceId>& ids);
    // After a chunk's submission: the probes it recorded (EngineProbes.cpp).
    void readBackProbes(const CommandRecorder& recorder, std::uint32_t rows, std::size_t firstRow,
                        StepProbes& probes);

    models::ModelConfig config_;
    EngineOptions options_;
    std::unique_ptr<VulkanContext> context_;
    std::unique_ptr<Kernels> kernels_;
    std::unique_ptr<CommandRecorder> recorder_;
    std::unique_ptr<KvCache> kvCache_;
    struct Layer;
    std::vector<Layer> layers_;
    // Whether this layer's attention runs inside its qkv_rope dispatch in decode steps.
    bool fusesAttention(const Layer& layer) const;
    struct Buffers;
    std::unique_ptr<Buffers> buffers_;
    std::map<SequenceId, std::vector<std::int32_t>> history_; // uncached mode recomputes these
    std::uint64_t weightBytes_ = 0;
    std::uint64_t baselineDeviceBytes_ = 0;
    std::uint64_t peakKvAllocatedBytes_ = 0;
    std::uint32_t peakActivationRows_ = 0;
};

} // namespace inferscope::compute
