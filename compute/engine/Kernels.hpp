#pragma once
// The transformer's GPU kernels as recordable steps, with their variants picked from the
// device's properties (workgroup width = subgroup size; on CPU devices each lane streams
// whole rows, on GPUs lanes split a row and reduce). Pipelines are built on first use per
// variant and cached; buffers that a variant does not use are bound to a dummy buffer.
#include "compute/formats/WeightFormat.hpp"
#include "compute/vulkan/CommandRecorder.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace inferscope::compute {

struct KernelTuning {
    std::uint32_t workgroup = 8;     // lanes per workgroup
    bool subgroupReduce = true;      // workgroup sums through subgroup operations
    bool splitColumns = false;       // lanes split a row (GPU) or own rows (CPU devices)
    bool broadcastInput = false;     // row layout: lanes share x slices by subgroup shuffles
    std::uint32_t decodeSlots = 2;   // rows per lane (or per workgroup) for 1-4 tokens
    std::uint32_t prefillSlots = 2;  // ... for larger batches
    std::uint32_t prefillTokens = 8; // tokens per workgroup for larger batches
    // ... on matrices that round their activations (roundsActivations); 0: prefillTokens.
    std::uint32_t int8PrefillTokens = 0;
    std::uint32_t attentionWorkgroup = 8;
    // Asked for by EngineOptions::int8Activations; applies where roundsActivations() says.
    bool int8Activations = false;
    // Int4 group and q4_1 matrices carry and read lane-scale copies where the layout allows
    // (readsLaneScales); false reads the packed scales (tests and A/B timings).
    bool laneScaleCopies = true;
    // Each row's sums in one order whatever else the step holds (EngineOptions::batchInvariant):
    // block scales applied after the products at every tile size, as decode tiles do (tiles of
    // PRESCALE_TOKENS and more otherwise scale the codes first: the same value, rounded
    // differently). Nothing else in a row's arithmetic depends on the rows beside it.
    bool batchInvariant = false;

    static KernelTuning forDevice(const DeviceInfo& info);
    // Whether the matrix kernels read the lane-scale copies of int4 group and q4_1 matrices: asked
    // for, 8 lanes of 8 rows on the broadcast path, every tile
    // (compute/formats/LaneScaleLayout.hpp).
    bool readsLaneScales() const;
};

// Per-token metadata for the cache-aware kernels (matches TokenInfo in kv_cache.glsl).
struct TokenInfo {
    std::uint32_t sequence = 0; // row of the sequence's block table
    std::uint32_t position = 0;
};

struct MatvecArgs {
    const DeviceMatrix* weights = nullptr;
    const Buffer* input = nullptr;
    std::uint32_t inputStride = 0; // elements; a multiple of 4 (zero-padded rows)
    const Buffer* output = nullptr;
    std::uint32_t outputStride = 0;
    std::uint32_t tokens = 0;
    const Buffer* normWeight = nullptr; // RMSNorm folded in when set
    float eps = 1e-5f;
    const Buffer* bias = nullptr;
    bool residual = false;          // output += result
    const Buffer* gather = nullptr; // input row of output t is gather[t]
    const Buffer* probe = nullptr;  // residual only: atomic max |h| per row at probeBase
    std::uint32_t probeBase = 0;
    // `weights` is one row chunk (RowChunkedMatrix) starting at this row of the whole matrix:
    // its results land in output (and bias, probe) columns firstRow + r.
    std::uint32_t firstRow = 0;
};

// The element (f16 half) of a KV cache buffer holding `kvBlocks` blocks where kind (0: K,
// 1: V), kv head, dimension `dim` of physical block `block` at `offset` sits: the host's
// copy of kvIndex in shaders/kv_cache.glsl, head-major.
inline std::uint64_t kvCacheElement(std::uint32_t block, std::uint32_t kind, std::uint32_t kvHead,
                                    std::uint32_t offset, std::uint32_t dim, std::uint32_t kvHeads,
                                    std::uint32_t kvBlocks, std::uint32_t blockSize,
                                    std::uint32_t headDim) {
    return ((((std::uint64_t(kind) * kvHeads + kvHead) * kvBlocks + block) * blockSize + offset) *
            headDim) +
           dim;
}

// The bytes of one KV cache block: K and V of every kv head, blockSize positions, f16.
inline std::uint64_t kvBlockBytes(std::uint32_t kvHeads, std::uint32_t blockSize,
                                  std::uint32_t headDim) {
    return 2ull * kvHeads * blockSize * headDim * sizeof(std::uint16_t);
}

struct KvLayout {
    // One layer's blocks, f16, head-major (shaders/kv_cache.glsl): the kernels take the
    // block count from its size.
    const Buffer* cache = nullptr;
    const Buffer* tokenInfo = nullptr;
    const Buffer* blockTables = nullptr;
    std::uint32_t blockSize = 16;
    std::uint32_t maxBlocks = 0; // block-table entries per sequence
};

struct QkvRopeArgs {
    const DeviceMatrix* weights = nullptr; // rows: Q heads, K heads, V heads
    const Buffer* input = nullptr;
    std::uint32_t inputStride = 0;
    const Buffer* queries = nullptr;
    std::uint32_t queryStride = 0;
    std::uint32_t tokens = 0;
    const Buffer* normWeight = nullptr;
    float eps = 1e-5f;
    const Buffer* bias = nullptr;
    const Buffer* ropeInvFrequency = nullptr; // headDim / 2 floats
    bool splitHalf = false;
    std::uint32_t heads = 0;
    std::uint32_t kvHeads = 0;
    std::uint32_t headDim = 0;
    KvLayout kv;
    std::uint32_t firstRow = 0;  // a row chunk of whole heads starting at this row
    float attentionScale = 0.0f; // the fused attention's q.k scale; 0: 1 / sqrt(headDim)
    // Attention fused into the same dispatch (fusesAttention; shaders/qkv_rope_body.glsl):
    // the output rows (as AttentionArgs::output) and the arrival counters, at least
    // arrivalWords(...) words, all zero (the kernel leaves them so). The caller guarantees
    // that every sequence has one new token in the dispatch, and that this is the matrix's
    // last chunk (firstRow + rows = every row) with the chunks before it dispatched first.
    const Buffer* attentionOutput = nullptr;
    std::uint32_t attentionOutputStride = 0;
    const Buffer* arrivals = nullptr;
};

struct GateUpArgs {
    const DeviceMatrix* weights = nullptr; // rows: gate, then up
    bool gelu = false;                     // GeGLU (gemma3) instead of SwiGLU
    const Buffer* input = nullptr;
    std::uint32_t inputStride = 0;
    const Buffer* output = nullptr;
    std::uint32_t outputStride = 0;
    std::uint32_t tokens = 0;
    const Buffer* normWeight = nullptr;
    float eps = 1e-5f;
    // A chunk of gate rows [firstRow, firstRow + n) then up rows of the same range.
    std::uint32_t firstRow = 0;
};

struct AttentionArgs {
    float scale = 0.0f;       // q.k scale; 0: 1 / sqrt(headDim)
    std::uint32_t window = 0; // sliding-window layers: positions seen, own included; 0: all
    const Buffer* queries = nullptr;
    std::uint32_t queryStride = 0;
    const Buffer* output = nullptr;
    std::uint32_t outputStride = 0;
    std::uint32_t tokens = 0;
    std::uint32_t heads = 0;
    std::uint32_t kvHeads = 0;
    std::uint32_t headDim = 0;
    KvLayout kv;
};

// Q/K norm, RoPE and the cache write after a plain matvec wrote Q|K|V rows (qwen3, gemma3).
struct QkNormRopeArgs {
    const Buffer* qkv = nullptr; // [tokens][qkvStride]: Q heads, K heads, V heads
    std::uint32_t qkvStride = 0;
    const Buffer* queries = nullptr;
    std::uint32_t queryStride = 0;
    std::uint32_t tokens = 0;
    const Buffer* qNorm = nullptr; // headDim floats each (any (1 + w) already added)
    const Buffer* kNorm = nullptr;
    float eps = 1e-6f;
    const Buffer* ropeInvFrequency = nullptr; // this layer's table (zeros: no rotation)
    bool splitHalf = true;
    std::uint32_t heads = 0, kvHeads = 0, headDim = 0;
    KvLayout kv;
};

// h += RMSNorm(y) * w per row (gemma3's post-norms), with the residual probe.
struct AddNormArgs {
    const Buffer* blockOutput = nullptr;
    const Buffer* hidden = nullptr;
    std::uint32_t stride = 0;
    std::uint32_t cols = 0;
    std::uint32_t tokens = 0;
    const Buffer* normWeight = nullptr;
    float eps = 1e-6f;
    const Buffer* probe = nullptr;
    std::uint32_t probeBase = 0;
};

class Kernels {
public:
    explicit Kernels(const VulkanContext& context);
    Kernels(const VulkanContext& context, const KernelTuning& tuning);

    const KernelTuning& tuning() const { return tuning_; }
    void setBatchInvariant(bool invariant) { tuning_.batchInvariant = invariant; }
    std::size_t pipelineCount() const { return pipelines_.size(); }

    void matvec(CommandRecorder& recorder, const MatvecArgs& args, const std::string& label);
    void qkvRope(CommandRecorder& recorder, const QkvRopeArgs& args, const std::string& label);
    void ffnGateUp(CommandRecorder& recorder, const GateUpArgs& args, const std::string& label);
    void attention(CommandRecorder& recorder, const AttentionArgs& args, const std::string& label);
    void qkNormRope(CommandRecorder& recorder, const QkNormRopeArgs& args,
                    const std::string& label);
    void addNorm(CommandRecorder& recorder, const AddNormArgs& args, const std::string& label);
    // Whether qkvRope can run attention in its own dispatch for this shape (CPU devices, where
    // attention takes the rows layout and a dispatch's fixed cost is tens of microseconds).
    bool fusesAttention(std::uint32_t heads, std::uint32_t kvHeads, std::uint32_t headDim) const;
    // The arrival counters a fused qkvRope of `tokens` tokens needs (QkvRopeArgs::arrivals).
    static std::uint32_t arrivalWords(std::uint32_t kvHeads, std::uint32_t tokens) {
        return kvHeads * tokens; // at most one token group per token
    }
    // `table` may be a row chunk holding token ids [firstRow, firstRow + table.rows) of a
    // vocabulary of `vocab` (0: the table is whole); tokens outside it are left to the
    // dispatches of the other chunks.
    void embed(CommandRecorder& recorder, const DeviceMatrix& table, const Buffer& tokenIds,
               const Buffer& output, std::uint32_t outputStride, std::uint32_t tokens,
               const std::string& label = "embed", std::uint32_t firstRow = 0,
               std::uint32_t vocab = 0, float scale = 1.0f);
    void argmax(CommandRecorder& recorder, const Buffer& logits, std::uint32_t cols,
                std::uint32_t stride, std::uint32_t rows, const Buffer& result,
                const std::string& label = "argmax");

    // Whether the kernels reading `weights` round their activations to 8 bits per 32 columns
    // and multiply in integers (INT8_ACTIVATIONS, shaders/matvec_core.glsl): asked for, a
    // 4-bit format with whole-word blocks, and the broadcast path with 8 lanes (lavapipe).
    bool roundsActivations(const DeviceMatrix& weights) const;

private:
    // texelFormats: per binding, which are texel buffers (see Pipeline); the shader name
    // (its weight format) determines them, so they are not part of the cache key.
    Pipeline& pipeline(const std::string& shader, std::uint32_t bindings, std::uint32_t pushBytes,
                       std::vector<std::uint32_t> specialization,
                       std::vector<vk::Format> texelFormats = {});
    struct MatvecShape {
        std::uint32_t rowSlots;
        std::uint32_t tokensPerGroup;
    };
    MatvecShape shapeFor(std::uint32_t tokens, bool pairs, const DeviceMatrix& weights) const;
    std::vector<std::uint32_t> coreSpecialization(const MatvecShape& shape, bool norm) const;
    // Where a kernel reading `weights` in `order` with `shape` reads its lane-scale copy: the
    // copy's first word (DeviceMatrix::laneScaleWords, never 0), else 0.
    std::uint32_t laneScaleWordsRead(const DeviceMatrix& weights, const LaneScaleOrder& order,
                                     const MatvecShape& shape) const;
    // Pads the body's constants to id 11, then appends BROADCAST_X (12), the matrix's
    // ROW_BLOCK (13), INT8_ACTIVATIONS (14), PRESCALE_TOKENS (15) and LANE_SCALES (16, where
    // laneScaleWords is not 0).
    void finishSpecialization(std::vector<std::uint32_t>& spec, const DeviceMatrix& weights,
                              std::uint32_t laneScaleWords) const;
    std::uint32_t rowGroups(std::uint32_t rows, const MatvecShape& shape) const;
    // Lanes of an attention workgroup, and whether attention takes the rows layout
    // (attention_rows_body.glsl) for this head size.
    std::uint32_t attentionWidth(std::uint32_t headDim) const;
    bool attentionRowsLayout(std::uint32_t headDim) const;

    const VulkanContext& context_;
    KernelTuning tuning_;
    Buffer dummy_;
    std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
};

} // namespace inferscope::compute
