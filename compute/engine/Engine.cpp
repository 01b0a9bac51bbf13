#include "compute/engine/Engine.hpp"

#include "compute/engine/EngineParts.hpp"
#include "compute/engine/EngineSupport.hpp"
#include "compute/engine/NonFiniteStep.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace inferscope::compute {

namespace {

std::vector<float> concatenate(std::initializer_list<const std::vector<float>*> parts) {
    std::size_t total = 0;
    for (const auto* part : parts) total += part->size();
    std::vector<float> joined;
    joined.reserve(total);
    for (const auto* part : parts) joined.insert(joined.end(), part->begin(), part->end());
    return joined;
}

// The activation rows a matrix kernel (matvec, gate-up) reads and writes for `tokens` tokens,
// with an RMSNorm folded in when `norm` is set: what every matrix dispatch of a step fills.
template <class Args>
Args matrixRows(const Buffer& input, std::uint32_t inputStride, const Buffer& output,
                std::uint32_t outputStride, std::uint32_t tokens, const Buffer* norm = nullptr,
                float eps = 1e-5f) {
    Args args;
    args.input = &input;
    args.inputStride = inputStride;
    args.output = &output;
    args.outputStride = outputStride;
    args.tokens = tokens;
    args.normWeight = norm;
    args.eps = eps;
    return args;
}

Buffer zeroedBuffer(const VulkanContext& context, std::uint64_t bytes, BufferKind kind,
                    const char* label) {
    Buffer buffer(context, bytes, kind, label);
    buffer.fillZero();
    return buffer;
}

} // namespace

EngineBufferPlan planEngineBuffers(const models::ModelConfig& c, const EngineOptions& options,
                                   std::uint64_t maxBindingBytes) {
    EngineBufferPlan plan;
    plan.blockSize = std::max<std::uint32_t>(1, options.blockSize);
    plan.capacityBlocks = std::max<std::uint32_t>(
        1, (options.kvCapacityTokens + plan.blockSize - 1) / plan.blockSize);
    const std::uint32_t context = options.maxContextPerSequence ? options.maxContextPerSequence
                                                                : std::max(c.contextLength, 1u);
    plan.maxBlocksPerSequence =
        std::min(plan.capacityBlocks, (context + plan.blockSize - 1) / plan.blockSize);
    // KV blocks: capacityBlocks x (K, V) x kvHeads x blockSize x headDim, f16.
    plan.kvBytesPerLayer =
        std::uint64_t(plan.capacityBlocks) * kvBlockBytes(c.kvHeads, plan.blockSize, c.headDim);
    // The logits of a step's rows share one buffer: as many rows as one binding holds.
    const std::uint64_t logitRowsThatFit =
        c.vocabSize ? maxBindingBytes / (std::uint64_t(c.vocabSize) * 4) : 1;
    plan.maxLogitRowsPerStep = std::uint32_t(std::clamp<std::uint64_t>(
        options.maxLogitRowsPerStep, 1, std::max<std::uint64_t>(logitRowsThatFit, 1)));
    plan.maxTokensPerStep = std::max<std::uint32_t>(1, options.maxTokensPerStep);
    plan.hiddenStride = paddedColumns(c.hiddenSize);
    plan.queryStride = paddedColumns(c.heads * c.headDim);
    plan.ffnStride = paddedColumns(c.ffnSize);
    const std::uint64_t tokens = plan.maxTokensPerStep, logitRows = plan.maxLogitRowsPerStep;
    auto atLeast16 = [](std::uint64_t bytes) { return std::max<std::uint64_t>(bytes, 16); };
    plan.hiddenBytes = atLeast16(tokens * plan.hiddenStride * 4);
    plan.queryBytes = atLeast16(tokens * plan.queryStride * 4);
    plan.attentionBytes = atLeast16(tokens * plan.queryStride * 4);
    plan.ffnBytes = atLeast16(tokens * plan.ffnStride * 4);
    plan.tokenIdBytes = atLeast16(tokens * 4);
    plan.tokenInfoBytes = atLeast16(tokens * sizeof(TokenInfo));
    plan.blockTableBytes =
        atLeast16(std::uint64_t(options.maxSequences) * plan.maxBlocksPerSequence * 4);
    plan.gatherBytes = atLeast16(logitRows * 4);
    plan.logitBytes = atLeast16(logitRows * c.vocabSize * 4);
    plan.argmaxBytes = atLeast16(logitRows * 4);
    plan.residualMaxBytes = atLeast16(std::uint64_t(c.layers) * plan.hiddenStride * 4);
    plan.arrivalBytes =
        atLeast16(std::uint64_t(Kernels::arrivalWords(c.kvHeads, plan.maxTokensPerStep)) * 4);
    if (c.windowedLayers() > 0) {
        // A sequence holds its window (from its last chunk's first position) plus that
        // chunk's tokens: at most this many blocks, and never more than the global layers.
        const std::uint64_t perSequence =
            (std::uint64_t(c.slidingWindow) - 1 + plan.maxTokensPerStep + plan.blockSize - 1) /
                plan.blockSize +
            1;
        plan.windowCapacityBlocks = std::uint32_t(std::min<std::uint64_t>(
            plan.capacityBlocks, perSequence * std::max<std::uint32_t>(1, options.maxSequences)));
        plan.kvBytesPerWindowedLayer = std::uint64_t(plan.windowCapacityBlocks) *
                                       kvBlockBytes(c.kvHeads, plan.blockSize, c.headDim);
        plan.windowBlockTableBytes = plan.blockTableBytes;
    }
    if (c.qkNorm) {
        plan.qkvStride = paddedColumns((c.heads + 2 * c.kvHeads) * c.headDim);
        plan.qkvRowsBytes = atLeast16(tokens * plan.qkvStride * 4);
    }
    if (c.postNorms) plan.blockOutputBytes = plan.hiddenBytes;
    return plan;
}

Engine::Engine(const models::LoadedModel& model, EngineOptions options)
    : config_(model.config), options_(std::move(options)) {
    // A copy of the store is a map of views plus the shared file mapping: cheap, and it
    // lets a format switch re-pack from the file's bytes without reading the file again.
    store_ = std::make_shared<const models::WeightStore>(model.weights);
    build([this](const std::string& name) { return store_->dequantized(name); },
          [this](const std::string& name) { return store_->contains(name); });
}

Engine::Engine(const models::ModelConfig& config, models::ReferenceWeights weights,
               EngineOptions options)
    : config_(config), options_(std::move(options)) {
    hostWeights_ = std::make_shared<const models::ReferenceWeights>(std::move(weights));
    build(
        [this](const std::string& name) {
            auto found = hostWeights_->find(name);
            if (found == hostWeights_->end())
                throw ComputeError("weight '" + name + "' is missing");
            return found->second;
        },
        [this](const std::string& name) { return hostWeights_->count(name) != 0; });
}

Engine::~Engine() = default;

void Engine::build(const WeightSource& weights, const WeightCheck& has) {
    const auto& c = config_;
    c.validate("engine");
    requireEngineSupport(c);
    context_ = std::make_unique<VulkanContext>(options_.device);
    KernelTuning tuning =
        options_.tuning ? *options_.tuning : KernelTuning::forDevice(context_->info());
    tuning.int8Activations = tuning.int8Activations || options_.int8Activations;
    tuning.batchInvariant = tuning.batchInvariant || options_.batchInvariant;
    kernels_ = std::make_unique<Kernels>(*context_, tuning);
    recorder_ = std::make_unique<CommandRecorder>(*context_);

    auto expectSize = [&](const std::string& name, const std::vector<float>& values,
                          std::uint64_t expected) {
        if (values.size() != expected) {
            throw ComputeError("weight '" + name + "' has " + std::to_string(values.size()) +
                               " values, expected " + std::to_string(expected));
        }
    };
    auto load = [&](const std::string& name, std::uint64_t expected) {
        auto values = weights(name);
        expectSize(name, values, expected);
        return values;
    };
    const std::uint64_t hidden = c.hiddenSize, qDim = std::uint64_t(c.heads) * c.headDim,
                        kvDim = std::uint64_t(c.kvHeads) * c.headDim;

    const auto plan = planEngineBuffers(c, options_, context_->info().maxBindingBytes());
    kvCache_ = makeKvCache(plan);
    // Norm weights as the kernels multiply by them: HF gemma's w plus its offset (1 + w).
    auto loadNorm = [&](const std::string& name, std::uint64_t expected) {
        auto values = load(name, expected);
        if (c.normWeightOffset != 0.0f)
            for (float& value : values) value += c.normWeightOffset;
        return values;
    };

    const auto before = context_->allocatedBytes();
    layers_.resize(c.layers);
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        auto& layer = layers_[l];
        layer.attnNorm = uploadVector(*context_, loadNorm(layerName(l, "attn_norm.weight"), hidden),
                                      layerName(l, "attn_norm"));
        layer.ffnNorm = uploadVector(*context_, loadNorm(layerName(l, "ffn_norm.weight"), hidden),
                                     layerName(l, "ffn_norm"));
        if (c.qkNorm) {
            layer.qNorm =
                uploadVector(*context_, loadNorm(layerName(l, "attn_q_norm.weight"), c.headDim),
                             layerName(l, "attn_q_norm"));
            layer.kNorm =
                uploadVector(*context_, loadNorm(layerName(l, "attn_k_norm.weight"), c.headDim),
                             layerName(l, "attn_k_norm"));
        }
        if (c.postNorms) {
            layer.postAttnNorm = uploadVector(
                *context_, loadNorm(layerName(l, "post_attention_norm.weight"), hidden),
                layerName(l, "post_attention_norm"));
            layer.postFfnNorm =
                uploadVector(*context_, loadNorm(layerName(l, "post_ffw_norm.weight"), hidden),
                             layerName(l, "post_ffw_norm"));
        }
        layer.windowed = c.windowed(l);
        if (c.qkvBias) {
            const auto qb = load(layerName(l, "attn_q.bias"), qDim);
            const auto kb = load(layerName(l, "attn_k.bias"), kvDim);
            const auto vb = load(layerName(l, "attn_v.bias"), kvDim);
            layer.qkvBias = uploadVector(*context_, concatenate({&qb, &kb, &vb}),
                                         layerName(l, "attn_qkv_bias"));
        }
    }

    buffers_ = std::make_unique<Buffers>();
    auto& b = *buffers_;
    b.outputNorm = uploadVector(*context_, loadNorm("output_norm.weight", hidden), "output_norm");
    std::vector<float> ropeFreqs;
    if (has("rope_freqs.weight")) ropeFreqs = load("rope_freqs.weight", c.headDim / 2);
    b.ropeInvFrequency =
        uploadVector(*context_, models::ropeInverseFrequencies(c, ropeFreqs), "rope_frequencies");
    // Per-layer RoPE: windowed layers rotate with their own base, NoPE layers by zero angles
    // (cos 1, sin 0: the values pass unchanged), both through the same kernels.
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        auto& layer = layers_[l];
        const auto table = models::layerRopeInverseFrequencies(c, l, ropeFreqs);
        Buffer& own = !c.usesRope(l)  ? b.ropeNone
                      : c.windowed(l) ? b.ropeWindow
                                      : b.ropeInvFrequency;
        if (own.size() == 0) own = uploadVector(*context_, table, "rope_frequencies");
        layer.ropeTable = &own;
    }
    vectorBytes_ = context_->allocatedBytes() - before;
    uploadMatrices();

    allocateKvBuffers(plan);

    options_.maxLogitRowsPerStep = plan.maxLogitRowsPerStep;
    const auto activationsBefore = context_->allocatedBytes();
    b.hiddenStride = plan.hiddenStride;
    b.queryStride = plan.queryStride;
    b.ffnStride = plan.ffnStride;
    auto zeroed = [&](std::uint64_t bytes, BufferKind kind, const char* label) {
        return zeroedBuffer(*context_, bytes, kind, label);
    };
    b.hidden = zeroed(plan.hiddenBytes, BufferKind::DeviceLocal, "hidden");
    b.queries = zeroed(plan.queryBytes, BufferKind::DeviceLocal, "queries");
    b.attention = zeroed(plan.attentionBytes, BufferKind::DeviceLocal, "attention");
    b.ffn = zeroed(plan.ffnBytes, BufferKind::DeviceLocal, "ffn");
    b.arrivals = zeroed(plan.arrivalBytes, BufferKind::DeviceLocal, "attention_arrivals");
    b.tokenIds = zeroed(plan.tokenIdBytes, BufferKind::Upload, "token_ids");
    b.tokenInfo = zeroed(plan.tokenInfoBytes, BufferKind::Upload, "token_info");
    allocateBlockTables(plan);
    b.gather = zeroed(plan.gatherBytes, BufferKind::Upload, "logit_rows");
    b.logits = zeroed(plan.logitBytes, BufferKind::Readback, "logits");
    b.argmax = zeroed(plan.argmaxBytes, BufferKind::Readback, "argmax");
    b.residualMax = zeroed(plan.residualMaxBytes, BufferKind::Readback, "residual_max");
    b.qkvStride = plan.qkvStride;
    if (plan.qkvRowsBytes)
        b.qkvRows = zeroed(plan.qkvRowsBytes, BufferKind::DeviceLocal, "qkv_rows");
    if (plan.blockOutputBytes)
        b.blockOutput = zeroed(plan.blockOutputBytes, BufferKind::DeviceLocal, "block_output");
    b.activationBytes = context_->allocatedBytes() - activationsBefore;
    context_->resetPeak();
}

std::unique_ptr<KvCache> Engine::makeKvCache(const EngineBufferPlan& plan) const {
    const auto& c = config_;
    // The cache stores f16 K and V: one position of a layer is 2 x kv heads x head dim x 2 B.
    auto cache = std::make_unique<KvCache>(
        std::vector<std::uint64_t>(c.layers, 2ull * c.kvHeads * c.headDim * sizeof(std::uint16_t)),
        plan.blockSize, plan.capacityBlocks, options_.maxSequences, plan.maxBlocksPerSequence);
    if (plan.windowCapacityBlocks) {
        std::vector<bool> windowed(c.layers);
        for (std::uint32_t l = 0; l < c.layers; ++l) windowed[l] = c.windowed(l);
        cache->configureWindow(std::move(windowed), c.slidingWindow, plan.windowCapacityBlocks);
    }
    return cache;
}

void Engine::allocateKvBuffers(const EngineBufferPlan& plan) {
    const auto& c = config_;
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        layers_[l].kv =
            Buffer(*context_, c.windowed(l) ? plan.kvBytesPerWindowedLayer : plan.kvBytesPerLayer,
                   BufferKind::DeviceLocal, layerName(l, "kv_cache"));
    }
}

void Engine::allocateBlockTables(const EngineBufferPlan& plan) {
    auto& b = *buffers_;
    b.blockTables =
        zeroedBuffer(*context_, plan.blockTableBytes, BufferKind::Upload, "block_tables");
    if (plan.windowBlockTableBytes)
        b.windowBlockTables = zeroedBuffer(*context_, plan.windowBlockTableBytes,
                                           BufferKind::Upload, "window_block_tables");
}

void Engine::renewKernels() {
    const KernelTuning tuning = kernels_->tuning();
    kernels_.reset(); // the old pipelines go before the new ones are built
    kernels_ = std::make_unique<Kernels>(*context_, tuning);
}

void Engine::setKvCapacity(std::uint32_t tokens) {
    if (tokens == options_.kvCapacityTokens) return;
    reset();
    auto options = options_;
    options.kvCapacityTokens = tokens;
    const auto plan = planEngineBuffers(config_, options, context_->info().maxBindingBytes());
    // The old cache goes first, so a resize never holds both.
    auto& b = *buffers_;
    const auto tableBytes = [&b] { return b.blockTables.size() + b.windowBlockTables.size(); };
    const std::uint64_t otherActivationBytes = b.activationBytes - tableBytes();
    for (auto& layer : layers_) layer.kv = {};
    b.blockTables = {};
    b.windowBlockTables = {};
    renewKernels();
    options_.kvCapacityTokens = tokens;
    kvCache_ = makeKvCache(plan);
    allocateKvBuffers(plan);
    allocateBlockTables(plan); // step buffers, counted with the activations
    b.activationBytes = otherActivationBytes + tableBytes();
    peakKvAllocatedBytes_ = 0;
    context_->resetPeak();
}

void Engine::setCached(bool cached) {
    if (cached == options_.cached) return;
    options_.cached = cached;
    // The cache of a sequence computed the other way is stale: rebuild from the history
    // on the next step.
    for (const auto& [id, tokens] : history_) kvCache_->truncate(id, 0);
}

std::uint32_t Engine::sequenceLength(SequenceId sequence) const {
    auto found = history_.find(sequence);
    return found == history_.end() ? 0 : std::uint32_t(found->second.size());
}

void Engine::release(SequenceId sequence) {
    kvCache_->release(sequence);
    history_.erase(sequence);
}

std::uint32_t Engine::forkSequence(SequenceId source, SequenceId target) {
    if (history_.count(target)) {
        throw ComputeError("sequence " + std::to_string(target) + " already exists");
    }
    const auto found = history_.find(source);
    if (found == history_.end() || !kvCache_->contains(source)) {
        throw ComputeError("unknown sequence " + std::to_string(source));
    }
    const std::uint32_t shared = kvCache_->forkPrefix(source, target);
    history_[target].assign(found->second.begin(), found->second.begin() + shared);
    return shared;
}

void Engine::truncate(SequenceId sequence, std::uint32_t newLength) {
    auto found = history_.find(sequence);
    const std::size_t length = found == history_.end() ? 0 : found->second.size();
    if (newLength > length)
        throw std::out_of_range("cannot cut sequence " + std::to_string(sequence) + " of " +
                                std::to_string(length) + " positions to " +
                                std::to_string(newLength));
    if (found == history_.end()) return;
    // Uncached, the cache holds nothing between steps already.
    kvCache_->truncate(sequence, options_.cached ? newLength : 0);
    found->second.resize(newLength);
}

void Engine::reset() {
    kvCache_->clear();
    history_.clear();
}

std::uint32_t Engine::dispatchesPerDecodeToken() const {
    // Embedding, five kernels per layer (four where attention runs inside qkv_rope), output
    // head and argmax; a matrix split into row chunks costs one dispatch per chunk.
    const auto& b = *buffers_;
    std::uint32_t dispatches = b.embedding.chunkCount() + b.head().chunkCount() + 1;
    for (const auto& layer : layers_)
        dispatches += layer.qkv.chunkCount() + (fusesAttention(layer) ? 0 : 1) +
                      layer.output.chunkCount() + layer.gateUp.chunkCount() +
                      layer.down.chunkCount() + (config_.qkNorm ? 1 : 0) +
                      (config_.postNorms ? 2 : 0);
    return dispatches;
}

void Engine::setBatchInvariant(bool invariant) {
    options_.batchInvariant = invariant;
    kernels_->setBatchInvariant(invariant);
}

bool Engine::fusesAttention(const Layer& layer) const {
    // Q/K norm runs after the projection, and the fused attention sees every position.
    // A matrix in several chunks attends in its last one (shaders/qkv_rope_body.glsl).
    return !config_.qkNorm && !layer.windowed &&
           kernels_->fusesAttention(config_.heads, config_.kvHeads, config_.headDim);
}

void Engine::matvecChunks(CommandRecorder& recorder, const RowChunkedMatrix& matrix,
                          MatvecArgs args, const std::string& label) {
    for (std::uint32_t i = 0; i < matrix.chunkCount(); ++i) {
        args.weights = &matrix.chunks[i];
        args.firstRow = matrix.firstRows[i];
        kernels_->matvec(recorder, args, label);
    }
}

EngineMemory Engine::memory() const {
    EngineMemory m;
    m.weightBytes = weightBytes_;
    for (const auto& layer : layers_) m.kvReservedBytes += layer.kv.size();
    m.kvAllocatedBytes = kvCache_->allocatedBytes();
    m.kvUsedBytes = kvCache_->usedBytes();
    m.activationBytes = buffers_->activationBytes;
    m.deviceBytes = context_->allocatedBytes();
    m.peakDeviceBytes = context_->peakAllocatedBytes();
    m.peakKvAllocatedBytes = peakKvAllocatedBytes_;
    m.peakActivationRows = peakActivationRows_;
    const auto& b = *buffers_;
    m.activationBytesPerRow =
        (std::uint64_t(b.hiddenStride) + 2ull * b.queryStride + b.ffnStride) * sizeof(float) +
        sizeof(std::uint32_t) + sizeof(TokenInfo);
    return m;
}

void Engine::resetPeakMemory() {
    context_->resetPeak();
    peakKvAllocatedBytes_ = kvCache_->allocatedBytes();
    peakActivationRows_ = 0;
}

void Engine::reserveWindow(std::span<const TokenRow> rows, const std::vector<SequenceId>& ids) {
    // Each sequence's positions in this chunk: its windowed blocks older than its first
    // position's window go back to the pool, its new positions get blocks, its table goes up.
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> span; // slot: first, end
    for (const auto& row : rows) {
        auto [it, fresh] = span.try_emplace(row.slot, row.position, row.position + 1);
        it->second.first = std::min(it->second.first, row.position);
        it->second.second = std::max(it->second.second, row.position + 1);
    }
    const std::uint32_t maxBlocks = kvCache_->maxBlocksPerSequence();
    for (const auto id : ids) {
        const std::uint32_t slot = kvCache_->slotOf(id);
        const auto found = span.find(slot);
        if (found == span.end()) continue;
        kvCache_->reserveWindow(id, found->second.first, found->second.second);
        const auto table = kvCache_->windowBlockTable(id);
        buffers_->windowBlockTables.upload(std::span<const std::uint32_t>(table),
                                           std::uint64_t(slot) * maxBlocks * 4);
    }
}

void Engine::uploadBlockTables(const std::vector<SequenceId>& sequences) {
    const std::uint32_t maxBlocks = kvCache_->maxBlocksPerSequence();
    for (const auto id : sequences) {
        const auto& table = kvCache_->blockTable(id);
        const std::uint32_t slot = kvCache_->slotOf(id);
        buffers_->blockTables.upload(std::span<const std::uint32_t>(table),
                                     std::uint64_t(slot) * maxBlocks * 4);
    }
}

StepResult Engine::step(const std::vector<SequenceInput>& batch, bool allLogits) {
    const auto start = std::chrono::steady_clock::now();
    std::set<SequenceId> seen;
    for (const auto& entry : batch) {
        if (entry.tokens.empty()) {
            throw ComputeError("sequence " + std::to_string(entry.sequence) + " has no new tokens");
        }
        if (!seen.insert(entry.sequence).second) {
            throw ComputeError("sequence " + std::to_string(entry.sequence) +
                               " appears twice in one step");
        }
        for (auto token : entry.tokens) {
            if (token < 0 || std::uint32_t(token) >= config_.vocabSize) {
                throw ComputeError("token id " + std::to_string(token) +
                                   " is outside the vocabulary of " +
                                   std::to_string(config_.vocabSize));
            }
        }
    }

    // Rows to compute: cached mode runs the new tokens after the cached positions; uncached
    // mode forgets the cache and recomputes every position of the sequence.
    // On any failure (cache full, device lost) every sequence goes back to where it was.
    struct Saved {
        SequenceId id;
        bool existed;
        std::size_t historySize;
        std::uint32_t cachedLength;
    };
    std::vector<Saved> saved;
    for (const auto& entry : batch) {
        const bool existed = history_.count(entry.sequence) != 0;
        saved.push_back({entry.sequence, existed, existed ? history_[entry.sequence].size() : 0,
                         kvCache_->length(entry.sequence)});
    }
    auto rollBack = [&] {
        for (const auto& s : saved) {
            if (!s.existed) {
                history_.erase(s.id);
                kvCache_->release(s.id);
                continue;
            }
            history_[s.id].resize(s.historySize);
            kvCache_->truncate(s.id, s.cachedLength);
        }
    };
    StepResult result;
    try {
        result = runStep(batch, allLogits, start);
    } catch (...) {
        rollBack();
        throw;
    }
    if (logitsAreFinite(result)) return result;
    // NaN or Inf logits are no result: run the step again with the residual stream copied
    // after each layer, and name the first layer whose output is not finite.
    rollBack();
    std::vector<StepRowOrigin> rows; // as runStep orders them
    for (const auto& entry : batch) {
        const auto found = history_.find(entry.sequence);
        const std::size_t end =
            (found == history_.end() ? 0 : found->second.size()) + entry.tokens.size();
        for (std::uint32_t p = options_.cached ? kvCache_->length(entry.sequence) : 0; p < end; ++p)
            rows.push_back({entry.sequence, p});
    }
    const ProbeOptions probes = options_.probes;
    options_.probes.residualStream = true;
    std::optional<StepProbes> probed;
    try {
        probed = runStep(batch, allLogits, start).probes;
    } catch (...) {
        probed.reset(); // the logits alone still say enough
    }
    options_.probes = probes;
    rollBack();
    throwNonFiniteStep(config_, rows, probed);
}

StepResult Engine::runStep(const std::vector<SequenceInput>& batch, bool allLogits,
                           std::chrono::steady_clock::time_point start) {
    StepResult result;
    auto& probes = result.probes;
    std::vector<TokenRow> rows;
    std::vector<SequenceId> ids;
    std::int32_t logitRows = 0;
    for (const auto& entry : batch) {
        auto& history = history_[entry.sequence];
        const std::uint32_t cachedLength = options_.cached ? kvCache_->length(entry.sequence) : 0;
        if (!options_.cached) kvCache_->truncate(entry.sequence, 0);
        if (options_.cached && cachedLength != history.size()) {
            throw ComputeError("sequence " + std::to_string(entry.sequence) +
                               " cache and history disagree");
        }
        const std::uint32_t first = std::uint32_t(history.size());
        history.insert(history.end(), entry.tokens.begin(), entry.tokens.end());
        const std::uint32_t total = std::uint32_t(history.size());
        kvCache_->reserve(entry.sequence, total);
        const std::uint32_t slot = kvCache_->slotOf(entry.sequence);
        const std::uint32_t from = options_.cached ? cachedLength : 0;
        for (std::uint32_t p = from; p < total; ++p) {
            const bool wantsLogits = p + 1 == total || (allLogits && p >= first);
            rows.push_back({history[p], slot, p, wantsLogits ? logitRows++ : -1});
        }
        if (total - from > 1) {
            probes.prefillTokens += total - from;
        } else {
            probes.decodeTokens += 1;
        }
        ids.push_back(entry.sequence);
    }
    uploadBlockTables(ids);
    const std::uint64_t rowMacs = models::layerMatrixMacsPerToken(config_) * config_.layers;
    for (const auto& row : rows) {
        probes.macs.projection += rowMacs;
        probes.macs.attention += models::attentionMacsAtPosition(config_, row.position);
    }
    probes.macs.projection += std::uint64_t(logitRows) * models::outputHeadMacsPerToken(config_);

    std::vector<float> logits(std::size_t(logitRows) * config_.vocabSize);
    std::vector<std::int32_t> argmax(logitRows);
    if (options_.probes.residualMax) {
        probes.residualMax.assign(config_.layers, std::vector<float>(config_.hiddenSize, 0.0f));
    }
    if (options_.probes.residualStream) {
        probes.residualStreamRows = std::uint32_t(rows.size());
        probes.residualStream.assign(std::size_t(config_.layers) * rows.size() * config_.hiddenSize,
                                     0.0f);
    }
    const std::uint32_t maxTokens = std::max<std::uint32_t>(1, options_.maxTokensPerStep);
    const std::uint32_t maxLogits = std::max<std::uint32_t>(1, options_.maxLogitRowsPerStep);
    std::size_t begin = 0;
    std::uint32_t logitBase = 0;
    bool firstChunk = true;
    while (begin < rows.size()) {
        std::size_t end = begin;
        std::uint32_t chunkLogits = 0;
        while (end < rows.size() && end - begin < maxTokens &&
               (rows[end].logitRow < 0 || chunkLogits < maxLogits)) {
            if (rows[end].logitRow >= 0) ++chunkLogits;
            ++end;
        }
        peakActivationRows_ = std::max(peakActivationRows_, std::uint32_t(end - begin));
        if (kvCache_->hasWindow())
            reserveWindow(std::span<const TokenRow>(rows.data() + begin, end - begin), ids);
        runChunk(std::span<const TokenRow>(rows.data() + begin, end - begin), begin, logitBase,
                 logits, argmax, probes, firstChunk);
        logitBase += chunkLogits;
        firstChunk = false;
        begin = end;
    }

    // Hand the rows back per sequence, in batch order.
    std::size_t row = 0;
    for (const auto& entry : batch) {
        SequenceOutput out;
        out.sequence = entry.sequence;
        out.length = std::uint32_t(history_[entry.sequence].size());
        const std::size_t count = allLogits ? entry.tokens.size() : 1;
        out.logits.assign(logits.begin() + std::ptrdiff_t(row * config_.vocabSize),
                          logits.begin() + std::ptrdiff_t((row + count) * config_.vocabSize));
        out.argmax.assign(argmax.begin() + std::ptrdiff_t(row),
                          argmax.begin() + std::ptrdiff_t(row + count));
        row += count;
        result.sequences.push_back(std::move(out));
    }
    probes.kvAllocatedBytesByLayer = kvCache_->allocatedBytesByLayer();
    peakKvAllocatedBytes_ = std::max(peakKvAllocatedBytes_, kvCache_->allocatedBytes());
    probes.kvUsedBytesByLayer = kvCache_->usedBytesByLayer();
    if (!options_.cached) {
        // Uncached: nothing is kept between steps (its peak was measured during the step).
        for (const auto& entry : batch) kvCache_->truncate(entry.sequence, 0);
    }
    probes.wallMicroseconds =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return result;
}

void Engine::runChunk(std::span<const TokenRow> rows, std::size_t firstRow,
                      std::uint32_t logitRowBase, std::vector<float>& logits,
                      std::vector<std::int32_t>& argmax, StepProbes& probes, bool firstChunk) {
    const auto& c = config_;
    auto& b = *buffers_;
    const std::uint32_t n = std::uint32_t(rows.size());
    std::vector<std::uint32_t> ids(n);
    std::vector<TokenInfo> info(n);
    std::vector<std::uint32_t> gather;
    for (std::uint32_t i = 0; i < n; ++i) {
        ids[i] = std::uint32_t(rows[i].token);
        info[i] = {rows[i].slot, rows[i].position};
        if (rows[i].logitRow >= 0) gather.push_back(i);
    }
    const std::uint32_t outputs = std::uint32_t(gather.size());
    b.tokenIds.upload(std::span<const std::uint32_t>(ids));
    b.tokenInfo.upload(std::span<const TokenInfo>(info));
    if (outputs) b.gather.upload(std::span<const std::uint32_t>(gather));

    // Attention runs inside qkv_rope when every sequence has one new row here (decode
    // steps), so the K and V it reads come from earlier steps or the same dispatch, and the
    // batch is small: there the dispatch it saves (tens of microseconds on lavapipe) is a
    // sizeable share of the step (default model, q4_1, two cores, alternating builds, six
    // rounds: decode 73.9 -> 79.1 tokens/s at C = 16, 66.5 -> 71.8 at C = 256). In a larger
    // batch a few workgroups would attend for many tokens each while the separate dispatch
    // spreads them over one workgroup per kv head and token.
    constexpr std::size_t kFusedAttentionMaxRows = 8;
    bool fusableRows = rows.size() <= kFusedAttentionMaxRows;
    if (fusableRows) {
        std::set<std::uint32_t> slots;
        for (const auto& row : rows) slots.insert(row.slot);
        fusableRows = slots.size() == rows.size();
    }

    const bool probeResidual = options_.probes.residualMax;
    const bool copyResidual = options_.probes.residualStream;
    // Layer l's rows go to [l][row] of the readback buffer, rows hiddenStride floats apart.
    const std::uint64_t residualLayerBytes = std::uint64_t(n) * b.hiddenStride * 4;
    if (copyResidual && b.residualStream.size() < residualLayerBytes * c.layers)
        b.residualStream = Buffer(*context_, residualLayerBytes * c.layers, BufferKind::Readback,
                                  "residual_stream");
    auto& rec = *recorder_;
    rec.begin(options_.probes.kernelTimings);
    if (probeResidual && firstChunk) rec.fill(b.residualMax, 0);
    for (std::uint32_t i = 0; i < b.embedding.chunkCount(); ++i)
        kernels_->embed(rec, b.embedding.chunks[i], b.tokenIds, b.hidden, b.hiddenStride, n,
                        "embed", b.embedding.firstRows[i], c.vocabSize, c.embeddingScale);
    const KvLayout kvBase{nullptr, &b.tokenInfo, &b.blockTables, kvCache_->blockSize(),
                          kvCache_->maxBlocksPerSequence()};
    const float attentionScale = c.attentionScaleValue();
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        auto& layer = layers_[l];
        KvLayout kv = kvBase;
        kv.cache = &layer.kv;
        if (layer.windowed) kv.blockTables = &b.windowBlockTables;

        QkvRopeArgs qkv;
        qkv.input = &b.hidden;
        qkv.inputStride = b.hiddenStride;
        qkv.queries = &b.queries;
        qkv.queryStride = b.queryStride;
        qkv.tokens = n;
        qkv.normWeight = &layer.attnNorm;
        qkv.eps = c.rmsNormEps;
        qkv.bias = c.qkvBias ? &layer.qkvBias : nullptr;
        qkv.ropeInvFrequency = layer.ropeTable;
        qkv.attentionScale = attentionScale;
        qkv.splitHalf = c.ropePairing == models::RopePairing::SplitHalf;
        qkv.heads = c.heads;
        qkv.kvHeads = c.kvHeads;
        qkv.headDim = c.headDim;
        qkv.kv = kv;
        const bool fused = fusableRows && fusesAttention(layer);
        if (fused) {
            qkv.attentionOutput = &b.attention;
            qkv.attentionOutputStride = b.queryStride;
            qkv.arrivals = &b.arrivals;
        }
        if (c.qkNorm) {
            // Q/K norm needs whole heads: a plain projection (RMSNorm folded in) to Q|K|V
            // rows, then qk_norm_rope normalizes, rotates and fills the cache.
            auto projection = matrixRows<MatvecArgs>(b.hidden, b.hiddenStride, b.qkvRows,
                                                     b.qkvStride, n, &layer.attnNorm, c.rmsNormEps);
            projection.bias = c.qkvBias ? &layer.qkvBias : nullptr;
            matvecChunks(rec, layer.qkv, projection, "qkv");
            QkNormRopeArgs norm;
            norm.qkv = &b.qkvRows;
            norm.qkvStride = b.qkvStride;
            norm.queries = &b.queries;
            norm.queryStride = b.queryStride;
            norm.tokens = n;
            norm.qNorm = &layer.qNorm;
            norm.kNorm = &layer.kNorm;
            norm.eps = c.rmsNormEps;
            norm.ropeInvFrequency = layer.ropeTable;
            norm.splitHalf = qkv.splitHalf;
            norm.heads = c.heads;
            norm.kvHeads = c.kvHeads;
            norm.headDim = c.headDim;
            norm.kv = kv;
            kernels_->qkNormRope(rec, norm, "qk_norm_rope");
        } else {
            const std::uint32_t chunks = layer.qkv.chunkCount();
            for (std::uint32_t i = 0; i < chunks; ++i) {
                const bool attends = fused && i + 1 == chunks;
                QkvRopeArgs chunk = qkv;
                chunk.weights = &layer.qkv.chunks[i];
                chunk.firstRow = layer.qkv.firstRows[i];
                if (!attends) {
                    chunk.attentionOutput = nullptr;
                    chunk.arrivals = nullptr;
                }
                kernels_->qkvRope(rec, chunk, attends ? "qkv_rope_attention" : "qkv_rope");
            }
        }

        AttentionArgs attention;
        attention.queries = &b.queries;
        attention.queryStride = b.queryStride;
        attention.output = &b.attention;
        attention.outputStride = b.queryStride;
        attention.tokens = n;
        attention.heads = c.heads;
        attention.kvHeads = c.kvHeads;
        attention.headDim = c.headDim;
        attention.kv = kv;
        attention.scale = attentionScale;
        attention.window = layer.windowed ? c.slidingWindow : 0;
        if (!fused) kernels_->attention(rec, attention, "attention");

        // Post-norm models write a block's output apart and add its norm to the residual.
        AddNormArgs postNorm;
        postNorm.blockOutput = &b.blockOutput;
        postNorm.hidden = &b.hidden;
        postNorm.stride = b.hiddenStride;
        postNorm.cols = c.hiddenSize;
        postNorm.tokens = n;
        postNorm.eps = c.rmsNormEps;

        const Buffer& blockSum = c.postNorms ? b.blockOutput : b.hidden;
        auto out = matrixRows<MatvecArgs>(b.attention, b.queryStride, blockSum, b.hiddenStride, n);
        out.residual = !c.postNorms;
        matvecChunks(rec, layer.output, out, "attn_out");
        if (c.postNorms) {
            postNorm.normWeight = &layer.postAttnNorm;
            kernels_->addNorm(rec, postNorm, "attn_post_norm");
        }

        auto gateUp = matrixRows<GateUpArgs>(b.hidden, b.hiddenStride, b.ffn, b.ffnStride, n,
                                             &layer.ffnNorm, c.rmsNormEps);
        gateUp.gelu = c.activation == models::FfnActivation::GeluTanh;
        for (std::uint32_t i = 0; i < layer.gateUp.chunkCount(); ++i) {
            gateUp.weights = &layer.gateUp.chunks[i];
            gateUp.firstRow = layer.gateUp.firstRows[i];
            kernels_->ffnGateUp(rec, gateUp, "ffn_gateup");
        }

        auto down = matrixRows<MatvecArgs>(b.ffn, b.ffnStride, blockSum, b.hiddenStride, n);
        down.residual = !c.postNorms;
        down.probe = probeResidual && !c.postNorms ? &b.residualMax : nullptr;
        down.probeBase = l * b.hiddenStride;
        matvecChunks(rec, layer.down, down, "ffn_down");
        if (c.postNorms) {
            postNorm.normWeight = &layer.postFfnNorm;
            postNorm.probe = probeResidual ? &b.residualMax : nullptr;
            postNorm.probeBase = l * b.hiddenStride;
            kernels_->addNorm(rec, postNorm, "ffn_post_norm");
        }
        if (copyResidual)
            rec.copy(b.hidden, b.residualStream, residualLayerBytes, 0, l * residualLayerBytes,
                     "residual_copy");
    }
    if (outputs) {
        auto head = matrixRows<MatvecArgs>(b.hidden, b.hiddenStride, b.logits, c.vocabSize, outputs,
                                           &b.outputNorm, c.rmsNormEps);
        head.gather = &b.gather;
        matvecChunks(rec, b.head(), head, "output_head");
        kernels_->argmax(rec, b.logits, c.vocabSize, c.vocabSize, outputs, b.argmax, "argmax");
    }
    rec.submitAndWait();
    probes.dispatches += rec.dispatchCount();
    probes.transfers += rec.transferCount();
    probes.submissions += 1;
    probes.gpuMicroseconds += rec.lastSubmitMicroseconds();

    if (outputs) {
        b.logits.download(logits.data() + std::size_t(logitRowBase) * c.vocabSize,
                          std::uint64_t(outputs) * c.vocabSize * 4);
        b.argmax.download(argmax.data() + logitRowBase, std::uint64_t(outputs) * 4);
    }
    readBackProbes(rec, n, firstRow, probes);
}

} // namespace inferscope::compute
