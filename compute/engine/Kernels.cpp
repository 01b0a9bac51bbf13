#include "compute/engine/Kernels.hpp"

#include "compute/formats/LaneScaleLayout.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace inferscope::compute {

namespace {

// PRESCALE_TOKENS of shaders/matvec_core.glsl (its default).
constexpr std::uint32_t kPrescaleTokens = 8;

// Matches shaders/matvec_params.glsl.
struct MatvecPush {
    std::uint32_t rows = 0;
    std::uint32_t cols = 0;
    std::uint32_t wStride = 0;
    std::uint32_t xStride = 0;
    std::uint32_t outStride = 0;
    std::uint32_t tokens = 0;
    float eps = 0.0f;
    std::uint32_t probeBase = 0;
    std::uint32_t heads = 0;
    std::uint32_t kvHeads = 0;
    std::uint32_t headDim = 0;
    std::uint32_t maxBlocks = 0;
    std::uint32_t formatWords = 0;
    std::uint32_t firstRow = 0;
    std::uint32_t attentionStride = 0;
    float attentionScale = 0.0f;
    std::uint32_t kvBlocks = 0;
    std::uint32_t laneScaleWords = 0;
};

struct AttentionPush {
    std::uint32_t tokens;
    std::uint32_t heads;
    std::uint32_t kvHeads;
    std::uint32_t headDim;
    std::uint32_t blockSize;
    std::uint32_t maxBlocks;
    std::uint32_t qStride;
    std::uint32_t outStride;
    float scale;
    std::uint32_t kvBlocks;
};

struct EmbedPush { // shaders/embed_params.glsl
    std::uint32_t rows;
    std::uint32_t cols;
    std::uint32_t wStride;
    std::uint32_t outStride;
    std::uint32_t tokens;
    std::uint32_t vocab;
    std::uint32_t firstRow;
    std::uint32_t formatWords;
};

struct QkNormRopePush {
    std::uint32_t tokens;
    std::uint32_t heads;
    std::uint32_t kvHeads;
    std::uint32_t headDim;
    std::uint32_t inStride;
    std::uint32_t qStride;
    std::uint32_t blockSize;
    std::uint32_t maxBlocks;
    std::uint32_t kvBlocks;
    float eps;
};

struct AddNormPush {
    std::uint32_t cols;
    std::uint32_t stride;
    std::uint32_t tokens;
    float eps;
    std::uint32_t probeBase;
};

// The q.k scale a kernel multiplies by: the model's where given, else 1 / sqrt(headDim).
float attentionScaleOr(float scale, std::uint32_t headDim) {
    return scale > 0.0f ? scale : 1.0f / std::sqrt(float(headDim));
}

struct ArgmaxPush {
    std::uint32_t cols;
    std::uint32_t stride;
    std::uint32_t rows;
};

std::uint32_t divideUp(std::uint32_t a, std::uint32_t b) {
    return (a + b - 1) / b;
}

// The texel format the weight includes read binding 0 as (shaders/dequant_*.glsl).
vk::Format weightTexelFormat(WeightFormat format) {
    switch (format) {
    case WeightFormat::F32:
        return vk::Format::eR32G32B32A32Sfloat;
    case WeightFormat::F16:
        // Four halves per texel: eight per texel measured slower on lavapipe (decode 9.2
        // against 11.6 tokens/s, default model, `inferscope-cli batch`).
        return vk::Format::eR32G32Uint;
    default:
        return vk::Format::eR32G32B32A32Uint; // four words per texel (quant_codes.glsl)
    }
}

// Binding 0 (the weights) as a texel buffer, the others storage buffers.
std::vector<vk::Format> weightTexelBindings(WeightFormat format) {
    return {weightTexelFormat(format)};
}

// The matrix kernels (shaders/matvec_core.glsl): weights, input rows (1) and norm weight (3)
// as texel buffers.
std::vector<vk::Format> matrixTexelBindings(WeightFormat format) {
    return {weightTexelFormat(format), vk::Format::eR32G32B32A32Sfloat, vk::Format::eUndefined,
            vk::Format::eR32G32B32A32Sfloat};
}

// The physical blocks a KV cache buffer holds: the stride of its head-major layout
// (shaders/kv_cache.glsl), K and V of every kv head in f16.
std::uint32_t kvBlocksIn(const KvLayout& kv, std::uint32_t kvHeads, std::uint32_t headDim) {
    const std::uint64_t blockBytes = kvBlockBytes(kvHeads, kv.blockSize, headDim);
    if (!kv.cache || blockBytes == 0 || kv.cache->size() < blockBytes)
        throw ComputeError("KV cache buffer holds no whole block");
    return std::uint32_t(kv.cache->size() / blockBytes);
}

void requireMultipleOf4(std::uint32_t stride, const char* what) {
    if (stride % 4 != 0) {
        throw ComputeError(std::string(what) + " stride " + std::to_string(stride) +
                           " is not a multiple of 4 (rows must be zero-padded)");
    }
}

} // namespace

KernelTuning KernelTuning::forDevice(const DeviceInfo& info) {
    KernelTuning tuning;
    tuning.subgroupReduce = info.subgroupArithmetic;
    const std::uint32_t subgroup = std::clamp<std::uint32_t>(info.subgroupSize, 1, 128);
    if (info.type == "cpu") {
        // lavapipe: a workgroup is one SIMD thread; lanes stream rows of their own.
        tuning.workgroup = std::max<std::uint32_t>(subgroup, 4);
        tuning.splitColumns = false;
        // Measured on lavapipe (2 cores): 8 rows per lane for decode (SmolLM2-135M decode
        // 20-30 tokens/s, against 14-21 with 4 rows per lane), and 8 rows x 16 tokens per
        // lane for prefill and batches over 8 (against 4 x 16: prompt of 64 tokens 36 vs 29
        // tokens/s, batched decode at B = 16 and 32 about 15% more tokens/s, quiet cores).
        tuning.decodeSlots = 8;
        tuning.prefillSlots = 8;
        tuning.prefillTokens = 16;
        // The int8 path keeps more per token in registers: 8 x 8 (the decode tile of 8
        // tokens) beat 8 x 16 there (default model, q4_1, --int8-activations, alternating
        // builds, three rounds: prompt of 54 tokens 435-514 against 635-802 ms, `batch` at
        // B = 16 / 32 83-90 / 85-87 against 79-88 / 78-80 tokens/s).
        tuning.int8PrefillTokens = 8;
        tuning.attentionWorkgroup = tuning.workgroup;
        // One subgroup per workgroup, 4 x width dividing the row padding.
        tuning.broadcastInput = info.subgroupShuffle && tuning.workgroup == subgroup &&
                                kColumnPadding % (4 * tuning.workgroup) == 0;
    } else {
        // GPUs: a subgroup per row block, coalesced loads across lanes, reduction at the end.
        tuning.workgroup = std::clamp<std::uint32_t>(subgroup, 16, 64);
        tuning.splitColumns = true;
        tuning.decodeSlots = 4;
        tuning.prefillSlots = 4;
        tuning.prefillTokens = 8;
        tuning.attentionWorkgroup = std::clamp<std::uint32_t>(subgroup, 8, 64);
    }
    if (!tuning.subgroupReduce) {
        // The shared-memory tree needs a power of two.
        std::uint32_t width = 1;
        while (width * 2 <= tuning.workgroup) width *= 2;
        tuning.workgroup = width;
        tuning.attentionWorkgroup = std::min(tuning.attentionWorkgroup, width);
    }
    return tuning;
}

Kernels::Kernels(const VulkanContext& context)
    : Kernels(context, KernelTuning::forDevice(context.info())) {}

Kernels::Kernels(const VulkanContext& context, const KernelTuning& tuning)
    : context_(context), tuning_(tuning),
      dummy_(context, 16, BufferKind::DeviceLocal, "unused binding") {
    dummy_.fillZero();
}

Pipeline& Kernels::pipeline(const std::string& shader, std::uint32_t bindings,
                            std::uint32_t pushBytes, std::vector<std::uint32_t> specialization,
                            std::vector<vk::Format> texelFormats) {
    std::string key = shader;
    for (auto value : specialization) key += ':' + std::to_string(value);
    auto found = pipelines_.find(key);
    if (found == pipelines_.end()) {
        found = pipelines_
                    .emplace(key, std::make_unique<Pipeline>(context_, shader, bindings, pushBytes,
                                                             std::move(specialization),
                                                             std::move(texelFormats)))
                    .first;
    }
    return *found->second;
}

Kernels::MatvecShape Kernels::shapeFor(std::uint32_t tokens, bool pairs,
                                       const DeviceMatrix& weights) const {
    MatvecShape shape{};
    // A workgroup computes all of its TOKENS columns whether or not the batch fills them,
    // so small batches get a tile that fits them: 1, 2, 4 or 8 tokens with the decode row
    // count (8 tokens x 8 rows: half the sums of the lavapipe prefill tile, 16 x 8).
    if (tokens <= 8) {
        shape.rowSlots = tuning_.decodeSlots;
        shape.tokensPerGroup = tokens <= 1 ? 1 : (tokens <= 2 ? 2 : (tokens <= 4 ? 4 : 8));
    } else {
        shape.rowSlots = tuning_.prefillSlots;
        shape.tokensPerGroup = tuning_.int8PrefillTokens && roundsActivations(weights)
                                   ? tuning_.int8PrefillTokens
                                   : tuning_.prefillTokens;
    }
    if (pairs && shape.rowSlots % 2) ++shape.rowSlots;
    return shape;
}

std::vector<std::uint32_t> Kernels::coreSpecialization(const MatvecShape& shape, bool norm) const {
    return {tuning_.workgroup, tuning_.subgroupReduce ? 1u : 0u,
            shape.rowSlots,    shape.tokensPerGroup,
            norm ? 1u : 0u,    tuning_.splitColumns ? 1u : 0u};
}

void Kernels::finishSpecialization(std::vector<std::uint32_t>& spec, const DeviceMatrix& weights,
                                   std::uint32_t laneScaleWords) const {
    spec.resize(12, 0);
    spec.push_back(tuning_.broadcastInput && !tuning_.splitColumns ? 1 : 0);
    spec.push_back(weights.rowBlock);                   // ROW_BLOCK (shaders/code_layout.glsl)
    spec.push_back(roundsActivations(weights) ? 1 : 0); // INT8_ACTIVATIONS (matvec_core.glsl)
    // PRESCALE_TOKENS: never, where a row's sums must not depend on the tile its batch picks.
    spec.push_back(tuning_.batchInvariant ? std::numeric_limits<std::uint32_t>::max()
                                          : kPrescaleTokens);
    spec.push_back(laneScaleWords != 0 ? 1 : 0); // LANE_SCALES
}

bool KernelTuning::readsLaneScales() const {
    return laneScaleCopies && broadcastInput && !splitColumns && workgroup == kLaneScaleLanes &&
           decodeSlots == kLaneScaleSlots && prefillSlots == kLaneScaleSlots;
}

std::uint32_t Kernels::laneScaleWordsRead(const DeviceMatrix& weights, const LaneScaleOrder& order,
                                          const MatvecShape& shape) const {
    const bool reads = weights.laneScaleOrder == order && tuning_.readsLaneScales() &&
                       shape.rowSlots == kLaneScaleSlots;
    return reads ? weights.laneScaleWords : 0;
}

bool Kernels::roundsActivations(const DeviceMatrix& weights) const {
    if (!tuning_.int8Activations || tuning_.splitColumns || !tuning_.broadcastInput ||
        tuning_.workgroup != 8)
        return false;
    const auto& info = weightFormatInfo(weights.format);
    return info.int8ActivationPath && (!info.alignedVariant || weights.alignedGroups);
}

std::uint32_t Kernels::rowGroups(std::uint32_t rows, const MatvecShape& shape) const {
    const std::uint32_t perGroup =
        tuning_.splitColumns ? shape.rowSlots : shape.rowSlots * tuning_.workgroup;
    return divideUp(rows, perGroup);
}

void Kernels::matvec(CommandRecorder& recorder, const MatvecArgs& a, const std::string& label) {
    requireMultipleOf4(a.inputStride, "matvec input");
    if (a.tokens == 0) return;
    const auto shape = shapeFor(a.tokens, false, *a.weights);
    auto spec = coreSpecialization(shape, a.normWeight != nullptr);
    spec.push_back(a.bias ? 1 : 0);
    spec.push_back(a.residual ? 1 : 0);
    spec.push_back(a.gather ? 1 : 0);
    spec.push_back(a.probe && a.residual ? 1 : 0);
    const auto laneScaleWords =
        laneScaleWordsRead(*a.weights, LaneScaleOrder{SlotRowOrder::Plain}, shape);
    finishSpecialization(spec, *a.weights, laneScaleWords);
    auto& pipe = pipeline("matvec_" + matrixShaderSuffix(*a.weights), 7, sizeof(MatvecPush), spec,
                          matrixTexelBindings(a.weights->format));
    MatvecPush push;
    push.rows = a.weights->rows;
    push.cols = a.weights->cols;
    push.wStride = a.weights->stride;
    push.xStride = a.inputStride;
    push.outStride = a.outputStride;
    push.tokens = a.tokens;
    push.eps = a.eps;
    push.probeBase = a.probeBase;
    push.formatWords = a.weights->formatWords;
    push.laneScaleWords = laneScaleWords;
    push.firstRow = a.firstRow;
    recorder.dispatch(pipe,
                      {{&a.weights->buffer},
                       {a.input},
                       {a.output},
                       {a.normWeight ? a.normWeight : &dummy_},
                       {a.bias ? a.bias : &dummy_},
                       {a.gather ? a.gather : &dummy_},
                       {a.probe ? a.probe : &dummy_}},
                      push, rowGroups(a.weights->rows, shape),
                      divideUp(a.tokens, shape.tokensPerGroup), 1, label);
}

void Kernels::qkvRope(CommandRecorder& recorder, const QkvRopeArgs& a, const std::string& label) {
    requireMultipleOf4(a.inputStride, "qkv input");
    if (a.tokens == 0) return;
    const std::uint32_t allRows = (a.heads + 2 * a.kvHeads) * a.headDim;
    if (a.headDim % 2 || a.firstRow % a.headDim || a.weights->rows % a.headDim ||
        a.weights->rows == 0 || a.firstRow + a.weights->rows > allRows) {
        throw ComputeError("qkv_rope: weight rows do not match heads x head dim");
    }
    const bool fused = a.attentionOutput != nullptr;
    const auto shape = shapeFor(a.tokens, true, *a.weights);
    const std::uint32_t tokenGroups = divideUp(a.tokens, shape.tokensPerGroup);
    if (fused) {
        if (!fusesAttention(a.heads, a.kvHeads, a.headDim))
            throw ComputeError("qkv_rope: this device's kernels cannot fuse attention");
        // The chunks before this one ran as plain dispatches (their rows are written).
        if (a.firstRow + a.weights->rows != allRows)
            throw ComputeError("qkv_rope: fused attention runs in the matrix's last chunk");
        if (!a.arrivals || a.arrivals->size() < std::uint64_t(a.kvHeads) * tokenGroups * 4)
            throw ComputeError("qkv_rope: fused attention needs arrival counters");
    }
    auto spec = coreSpecialization(shape, a.normWeight != nullptr);
    spec.push_back(a.splitHalf ? 1 : 0);
    spec.push_back(a.bias ? 1 : 0);
    spec.push_back(fused ? 1 : 0);                             // FUSED_ATTENTION
    spec.push_back(fused ? a.heads / a.kvHeads : 1);           // ATTENTION_GROUP
    spec.push_back(fused ? a.headDim / tuning_.workgroup : 8); // DIMS_PER_LANE
    spec.push_back(std::max(a.kv.blockSize, 1u));              // KV_BLOCK_SIZE (a cache's >= 1)
    const auto laneScaleWords = laneScaleWordsRead(
        *a.weights, LaneScaleOrder{SlotRowOrder::RopePairs, a.headDim, a.splitHalf}, shape);
    finishSpecialization(spec, *a.weights, laneScaleWords);
    // Bindings 9 and 12, the fused attention's views of the cache (eight halves per texel)
    // and of the queries.
    auto texels = matrixTexelBindings(a.weights->format);
    texels.resize(13, vk::Format::eUndefined);
    texels[9] = vk::Format::eR32G32B32A32Uint;
    texels[12] = vk::Format::eR32G32B32A32Sfloat;
    auto& pipe = pipeline("qkv_rope_" + matrixShaderSuffix(*a.weights), 13, sizeof(MatvecPush),
                          spec, std::move(texels));
    MatvecPush push;
    push.rows = a.weights->rows;
    push.cols = a.weights->cols;
    push.wStride = a.weights->stride;
    push.xStride = a.inputStride;
    push.outStride = a.queryStride;
    push.tokens = a.tokens;
    push.eps = a.eps;
    push.heads = a.heads;
    push.kvHeads = a.kvHeads;
    push.headDim = a.headDim;
    push.maxBlocks = a.kv.maxBlocks;
    push.formatWords = a.weights->formatWords;
    push.laneScaleWords = laneScaleWords;
    push.firstRow = a.firstRow;
    push.attentionStride = a.attentionOutputStride;
    push.attentionScale = attentionScaleOr(a.attentionScale, a.headDim);
    push.kvBlocks = kvBlocksIn(a.kv, a.kvHeads, a.headDim);
    recorder.dispatch(pipe,
                      {{&a.weights->buffer},
                       {a.input},
                       {a.queries},
                       {a.normWeight ? a.normWeight : &dummy_},
                       {a.bias ? a.bias : &dummy_},
                       {a.kv.tokenInfo},
                       {a.kv.blockTables},
                       {a.kv.cache},
                       {a.ropeInvFrequency},
                       {fused ? a.kv.cache : &dummy_},
                       {fused ? a.attentionOutput : &dummy_},
                       {fused ? a.arrivals : &dummy_},
                       {fused ? a.queries : &dummy_}},
                      push, rowGroups(a.weights->rows, shape), tokenGroups, 1, label);
}

void Kernels::ffnGateUp(CommandRecorder& recorder, const GateUpArgs& a, const std::string& label) {
    requireMultipleOf4(a.inputStride, "ffn input");
    if (a.tokens == 0) return;
    if (a.weights->rows % 2) throw ComputeError("ffn_gateup: odd number of gate+up rows");
    const auto shape = shapeFor(a.tokens, true, *a.weights);
    auto spec = coreSpecialization(shape, a.normWeight != nullptr);
    if (a.gelu) spec.push_back(1); // GELU (constant 6); SwiGLU leaves it at its default
    const auto laneScaleWords =
        laneScaleWordsRead(*a.weights, LaneScaleOrder{SlotRowOrder::GateUpPairs}, shape);
    finishSpecialization(spec, *a.weights, laneScaleWords);
    auto& pipe = pipeline("ffn_gateup_" + matrixShaderSuffix(*a.weights), 4, sizeof(MatvecPush),
                          spec, matrixTexelBindings(a.weights->format));
    MatvecPush push;
    push.rows = a.weights->rows;
    push.cols = a.weights->cols;
    push.wStride = a.weights->stride;
    push.xStride = a.inputStride;
    push.outStride = a.outputStride;
    push.tokens = a.tokens;
    push.eps = a.eps;
    push.formatWords = a.weights->formatWords;
    push.laneScaleWords = laneScaleWords;
    push.firstRow = a.firstRow;
    recorder.dispatch(
        pipe,
        {{&a.weights->buffer}, {a.input}, {a.output}, {a.normWeight ? a.normWeight : &dummy_}},
        push, rowGroups(a.weights->rows, shape), divideUp(a.tokens, shape.tokensPerGroup), 1,
        label);
}

std::uint32_t Kernels::attentionWidth(std::uint32_t headDim) const {
    std::uint32_t width = std::min(tuning_.attentionWorkgroup, headDim);
    while (width > 1 && headDim % width) width /= 2;
    return width;
}

bool Kernels::attentionRowsLayout(std::uint32_t headDim) const {
    // CPU devices: lanes take positions for the scores (attention_rows_body.glsl); it needs
    // the workgroup to be exactly one subgroup wide and a multiple of 8 dimensions per lane.
    const std::uint32_t width = attentionWidth(headDim);
    return tuning_.broadcastInput && !tuning_.splitColumns && width == tuning_.workgroup &&
           headDim % (8 * width) == 0;
}

bool Kernels::fusesAttention(std::uint32_t heads, std::uint32_t kvHeads,
                             std::uint32_t headDim) const {
    // The kernel keeps the kv groups a workgroup touches as bits of one word.
    return attentionRowsLayout(headDim) && kvHeads > 0 && kvHeads <= 32 && heads % kvHeads == 0;
}

void Kernels::attention(CommandRecorder& recorder, const AttentionArgs& a,
                        const std::string& label) {
    if (a.tokens == 0) return;
    if (a.kvHeads == 0 || a.heads % a.kvHeads) {
        throw ComputeError("attention: heads must be a multiple of kv heads");
    }
    const std::uint32_t width = attentionWidth(a.headDim);
    const std::uint32_t group = a.heads / a.kvHeads;
    const bool rows = attentionRowsLayout(a.headDim);
    // Binding 1, the f16 cache, is read as texels: eight halves each in attention_rows, two
    // in attention.
    std::vector<std::uint32_t> spec{width, tuning_.subgroupReduce ? 1u : 0u, group,
                                    a.headDim / width, std::max(a.kv.blockSize, 1u)};
    if (a.window) {
        spec.resize(20, 0);
        spec.push_back(a.window); // WINDOW (constant 20); global layers leave it at 0
    }
    auto& pipe = pipeline(
        rows ? "attention_rows" : "attention", 5, sizeof(AttentionPush), std::move(spec),
        {vk::Format::eUndefined, rows ? vk::Format::eR32G32B32A32Uint : vk::Format::eR32Uint});
    const AttentionPush push{a.tokens,
                             a.heads,
                             a.kvHeads,
                             a.headDim,
                             a.kv.blockSize,
                             a.kv.maxBlocks,
                             a.queryStride,
                             a.outputStride,
                             attentionScaleOr(a.scale, a.headDim),
                             kvBlocksIn(a.kv, a.kvHeads, a.headDim)};
    recorder.dispatch(pipe,
                      {{a.queries}, {a.kv.cache}, {a.kv.tokenInfo}, {a.kv.blockTables}, {a.output}},
                      push, a.kvHeads, a.tokens, 1, label);
}

void Kernels::qkNormRope(CommandRecorder& recorder, const QkNormRopeArgs& a,
                         const std::string& label) {
    if (a.tokens == 0) return;
    if (a.headDim % 2 || a.kvHeads == 0 || a.heads % a.kvHeads)
        throw ComputeError("qk_norm_rope: heads must be a multiple of kv heads, head dim even");
    auto& pipe =
        pipeline("qk_norm_rope", 8, sizeof(QkNormRopePush),
                 {tuning_.workgroup, tuning_.subgroupReduce ? 1u : 0u, a.splitHalf ? 1u : 0u});
    const QkNormRopePush push{
        a.tokens,       a.heads,        a.kvHeads,
        a.headDim,      a.qkvStride,    a.queryStride,
        a.kv.blockSize, a.kv.maxBlocks, kvBlocksIn(a.kv, a.kvHeads, a.headDim),
        a.eps};
    recorder.dispatch(pipe,
                      {{a.qkv},
                       {a.qNorm},
                       {a.kNorm},
                       {a.kv.tokenInfo},
                       {a.kv.blockTables},
                       {a.kv.cache},
                       {a.ropeInvFrequency},
                       {a.queries}},
                      push, divideUp(a.heads + 2 * a.kvHeads, tuning_.workgroup), a.tokens, 1,
                      label);
}

void Kernels::addNorm(CommandRecorder& recorder, const AddNormArgs& a, const std::string& label) {
    if (a.tokens == 0) return;
    auto& pipe = pipeline("add_norm", 4, sizeof(AddNormPush),
                          {tuning_.workgroup, tuning_.subgroupReduce ? 1u : 0u, a.probe ? 1u : 0u});
    const AddNormPush push{a.cols, a.stride, a.tokens, a.eps, a.probeBase};
    recorder.dispatch(pipe,
                      {{a.blockOutput}, {a.normWeight}, {a.hidden}, {a.probe ? a.probe : &dummy_}},
                      push, a.tokens, 1, 1, label);
}

void Kernels::embed(CommandRecorder& recorder, const DeviceMatrix& table, const Buffer& tokenIds,
                    const Buffer& output, std::uint32_t outputStride, std::uint32_t tokens,
                    const std::string& label, std::uint32_t firstRow, std::uint32_t vocab,
                    float scale) {
    requireMultipleOf4(outputStride, "embedding output");
    if (tokens == 0) return;
    std::vector<std::uint32_t> spec{tuning_.workgroup, tuning_.subgroupReduce ? 1u : 0u};
    spec.resize(13, 0);
    spec.push_back(table.rowBlock); // ROW_BLOCK (shaders/code_layout.glsl)
    if (scale != 1.0f) spec.push_back(std::bit_cast<std::uint32_t>(scale)); // EMBED_SCALE (14)
    auto& pipe = pipeline("embed_" + matrixShaderSuffix(table), 3, sizeof(EmbedPush),
                          std::move(spec), weightTexelBindings(table.format));
    const EmbedPush push{table.rows,   table.cols,       table.stride,
                         outputStride, tokens,           vocab ? vocab : table.rows,
                         firstRow,     table.formatWords};
    recorder.dispatch(pipe, {{&table.buffer}, {&tokenIds}, {&output}}, push, tokens, 1, 1, label);
}

void Kernels::argmax(CommandRecorder& recorder, const Buffer& logits, std::uint32_t cols,
                     std::uint32_t stride, std::uint32_t rows, const Buffer& result,
                     const std::string& label) {
    if (rows == 0) return;
    const bool texels = stride % 4 == 0; // TEXELS (argmax.comp)
    auto& pipe =
        pipeline("argmax", 3, sizeof(ArgmaxPush),
                 {tuning_.workgroup, tuning_.subgroupReduce ? 1u : 0u, texels ? 1u : 0u},
                 {vk::Format::eUndefined, vk::Format::eUndefined, vk::Format::eR32G32B32A32Sfloat});
    const ArgmaxPush push{cols, stride, rows};
    recorder.dispatch(pipe, {{&logits}, {&result}, {texels ? &logits : &dummy_}}, push, rows, 1, 1,
                      label);
}

} // namespace inferscope::compute
