#include "models/reference/ReferenceTransformer.hpp"

#include "models/ModelError.hpp"
#include "models/formats/TensorNames.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <numbers>
#include <optional>
#include <set>
#include <thread>

namespace inferscope::models {

// A few workers that stay alive between products: creating threads for each of the ~150
// products of one decode step would cost more than the products of a small model.
// run() hands the same task to every thread (the caller is part 0) and waits for all.
class ReferenceThreadPool {
public:
    explicit ReferenceThreadPool(unsigned threads) {
        for (unsigned part = 1; part < threads; ++part)
            workers_.emplace_back([this, part] { workerLoop(part); });
    }
    ~ReferenceThreadPool() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (auto& worker : workers_) worker.join();
    }
    ReferenceThreadPool(const ReferenceThreadPool&) = delete;
    ReferenceThreadPool& operator=(const ReferenceThreadPool&) = delete;

    unsigned parts() const { return static_cast<unsigned>(workers_.size()) + 1; }

    void run(const std::function<void(unsigned part)>& task) {
        // Copies of a transformer share the pool; one job at a time keeps them correct.
        std::lock_guard serial(callMutex_);
        if (workers_.empty()) {
            task(0);
            return;
        }
        {
            std::lock_guard lock(mutex_);
            task_ = &task;
            pending_ = workers_.size();
            ++generation_;
        }
        wake_.notify_all();
        std::exception_ptr error;
        try {
            task(0);
        } catch (...) {
            error = std::current_exception();
        }
        std::unique_lock lock(mutex_);
        done_.wait(lock, [this] { return pending_ == 0; });
        task_ = nullptr;
        if (!error) error = workerError_;
        workerError_ = nullptr;
        if (error) std::rethrow_exception(error);
    }

private:
    void workerLoop(unsigned part) {
        std::uint64_t seenGeneration = 0;
        for (;;) {
            const std::function<void(unsigned)>* task = nullptr;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || generation_ != seenGeneration; });
                if (stopping_) return;
                seenGeneration = generation_;
                task = task_;
            }
            std::exception_ptr error;
            try {
                (*task)(part);
            } catch (...) {
                error = std::current_exception();
            }
            std::lock_guard lock(mutex_);
            if (error && !workerError_) workerError_ = error;
            if (--pending_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex callMutex_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const std::function<void(unsigned)>* task_ = nullptr;
    std::size_t pending_ = 0;
    std::uint64_t generation_ = 0;
    bool stopping_ = false;
    std::exception_ptr workerError_;
};

ReferenceWeights dequantizeAll(const WeightStore& store) {
    ReferenceWeights weights;
    for (const auto& [name, tensor] : store.tensors())
        weights.emplace(name, store.dequantized(name));
    return weights;
}

namespace {

// Four floats as one value with lane-wise arithmetic (a GCC/Clang vector extension, one SSE
// register on baseline x86-64, NEON on ARM), so the partial sums stay in registers and the
// compiler emits exactly the operations written here.
typedef float Lanes __attribute__((vector_size(4 * sizeof(float))));

Lanes loadLanes(const float* values) {
    Lanes lanes;
    std::memcpy(&lanes, values, sizeof lanes);
    return lanes;
}

// Dot products of one weight row with `Count` (1..4) input vectors, reading the row once for
// all of them. Each product keeps 8 interleaved partial sums (columns c mod 8, in two 4-lane
// halves), combines them pairwise, then adds the tail: the same order whatever `Count` is,
// so a position's result does not depend on how many positions share a call and cached and
// uncached runs give identical logits.
template <std::size_t Count>
void dotRow(const float* row, const float* const* inputs, std::size_t cols, float* out) {
    Lanes low[Count] = {};
    Lanes high[Count] = {};
    std::size_t c = 0;
    for (; c + 8 <= cols; c += 8) {
        const Lanes weightsLow = loadLanes(row + c);
        const Lanes weightsHigh = loadLanes(row + c + 4);
#pragma GCC unroll 4
        for (std::size_t n = 0; n < Count; ++n) {
            low[n] += weightsLow * loadLanes(inputs[n] + c);
            high[n] += weightsHigh * loadLanes(inputs[n] + c + 4);
        }
    }
    for (std::size_t n = 0; n < Count; ++n) {
        const Lanes& a = low[n];
        const Lanes& b = high[n];
        float sum = ((a[0] + b[0]) + (a[1] + b[1])) + ((a[2] + b[2]) + (a[3] + b[3]));
        for (std::size_t tail = c; tail < cols; ++tail) sum += row[tail] * inputs[n][tail];
        out[n] = sum;
    }
}

float dot(const float* a, const float* b, std::size_t n) {
    float result = 0.0f;
    dotRow<1>(a, &b, n, &result);
    return result;
}

// One weight matrix [rows][cols] as the products read it: rows of an fp32 copy, or rows of a
// stored tensor (any TensorType) dequantized into a scratch row when they are reached.
class MatrixRows {
public:
    MatrixRows() = default;
    MatrixRows(const float* values, std::size_t rows, std::size_t cols)
        : values_(values), rows_(rows), cols_(cols) {}
    MatrixRows(const StoredTensor& tensor, std::size_t rows, std::size_t cols, std::size_t rowBytes)
        : stored_(tensor.data), type_(tensor.type), rowBytes_(rowBytes), rows_(rows), cols_(cols) {}

    std::size_t rows() const { return rows_; }
    std::size_t cols() const { return cols_; }
    bool needsScratch() const { return values_ == nullptr; }
    // The stored tensor this views (empty on the fp32 path).
    std::span<const std::uint8_t> stored() const { return stored_; }
    // Row r as f32: a pointer into the copy, or `scratch` (cols floats) filled from the file.
    const float* row(std::size_t r, float* scratch) const {
        if (values_) return values_ + r * cols_;
        copyRow(r, scratch);
        return scratch;
    }
    void copyRow(std::size_t r, float* out) const {
        if (values_) {
            std::copy_n(values_ + r * cols_, cols_, out);
            return;
        }
        dequantize(type_, stored_.subspan(r * rowBytes_, rowBytes_), std::span<float>(out, cols_));
    }

private:
    const float* values_ = nullptr;
    std::span<const std::uint8_t> stored_;
    TensorType type_ = TensorType::F32;
    std::size_t rowBytes_ = 0;
    std::size_t rows_ = 0, cols_ = 0;
};

// One matrix-vector product over many positions: out[t][r] = sum_c W[r][c] x[t][c] + b[r].
struct Projection {
    const MatrixRows* weight = nullptr;   // [rows][cols]
    const float* bias = nullptr;          // [rows] or null
    std::vector<float>* output = nullptr; // [positions][rows]
    std::size_t rows = 0;
};

// Rows [begin, end) of one projection for all positions. Positions are taken in tiles that
// stay in cache while the rows stream past, four at a time per row; a stored row is
// dequantized once per tile.
void projectRows(const Projection& p, const std::vector<float>& input, std::size_t cols,
                 std::size_t positions, std::size_t begin, std::size_t end) {
    constexpr std::size_t kTile = 32;
    std::vector<float> scratch(p.weight->needsScratch() ? cols : 0);
    float* output = p.output->data();
    for (std::size_t tile = 0; tile < positions; tile += kTile) {
        const std::size_t tileEnd = std::min(positions, tile + kTile);
        for (std::size_t r = begin; r < end; ++r) {
            const float* row = p.weight->row(r, scratch.data());
            const float bias = p.bias ? p.bias[r] : 0.0f;
            std::size_t t = tile;
            float sums[4];
            for (; t + 4 <= tileEnd; t += 4) {
                const float* xs[4] = {&input[t * cols], &input[(t + 1) * cols],
                                      &input[(t + 2) * cols], &input[(t + 3) * cols]};
                dotRow<4>(row, xs, cols, sums);
                for (std::size_t n = 0; n < 4; ++n) output[(t + n) * p.rows + r] = sums[n] + bias;
            }
            for (; t < tileEnd; ++t) {
                const float* x = &input[t * cols];
                dotRow<1>(row, &x, cols, sums);
                output[t * p.rows + r] = sums[0] + bias;
            }
        }
    }
}

// RMSNorm: x / sqrt(mean(x^2) + eps) * weight. The sum of squares is accumulated in double:
// the residual stream has outlier dimensions hundreds of times larger than the rest, and a
// float sum over thousands of such squares loses the small ones (one sum per vector: free).
// `offset` is added to each weight (gemma's HF norms compute x * (1 + w)).
void rmsNorm(const float* x, const float* weight, std::size_t n, float eps, float* out,
             float offset = 0.0f) {
    double sumSquares = 0.0;
    for (std::size_t i = 0; i < n; ++i) sumSquares += double(x[i]) * double(x[i]);
    const float scale = float(1.0 / std::sqrt(sumSquares / double(n) + double(eps)));
    for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * (weight[i] + offset);
}

float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

// GELU with the tanh approximation (gelu_pytorch_tanh):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
float geluTanh(float x) {
    constexpr float sqrtTwoOverPi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(sqrtTwoOverPi * (x + 0.044715f * x * x * x)));
}

std::string layerName(std::uint32_t layer, const char* tensor) {
    return layerTensorName(layer, tensor);
}

} // namespace

std::vector<float> ropeInverseFrequencies(const ModelConfig& config,
                                          std::span<const float> ropeFreqs) {
    return ropeFrequencyTable(config.ropeTheta, config.ropeScaling, config.headDim, ropeFreqs);
}

std::vector<float> layerRopeInverseFrequencies(const ModelConfig& config, std::uint32_t layer,
                                               std::span<const float> ropeFreqs) {
    if (!config.usesRope(layer)) return std::vector<float>(config.headDim / 2, 0.0f);
    if (config.windowed(layer))
        return ropeFrequencyTable(config.ropeThetaOf(layer), {}, config.headDim, {});
    return ropeInverseFrequencies(config, ropeFreqs);
}

std::vector<float> ropeFrequencyTable(float theta, const RopeScaling& scaling,
                                      std::uint32_t headDim, std::span<const float> ropeFreqs) {
    const std::size_t half = headDim / 2;
    if (!ropeFreqs.empty() && ropeFreqs.size() != half)
        throw ModelError("rope_freqs.weight has " + std::to_string(ropeFreqs.size()) +
                         " values, expected " + std::to_string(half));
    if (scaling.type == RopeScalingType::LongRope && scaling.frequencyFactors.size() != half)
        throw ModelError("LongRope has " + std::to_string(scaling.frequencyFactors.size()) +
                         " factors, expected " + std::to_string(half));
    std::vector<float> inverse(half);
    for (std::size_t i = 0; i < half; ++i) {
        double freq = std::pow(double(theta), -2.0 * double(i) / double(headDim));
        if (scaling.type == RopeScalingType::LongRope) {
            // Per-pair divisors, as rope_freqs.weight (the attention factor scales the scores:
            // ModelConfig::attentionScaleValue).
            freq /= double(scaling.frequencyFactors[i]);
        } else if (!ropeFreqs.empty()) {
            // Llama 3 GGUF files store the llama3 adjustment as per-pair divisors.
            freq /= double(ropeFreqs[i]);
        } else if (scaling.type == RopeScalingType::Llama3) {
            // Long wavelengths (beyond originalContext / lowFreqFactor) are slowed by
            // `factor`, short ones (below originalContext / highFreqFactor) kept, and the
            // band between blended linearly in originalContext / wavelength.
            const double wavelength = 2.0 * std::numbers::pi / freq;
            const double context = scaling.originalContext;
            const double low = scaling.lowFreqFactor;
            const double high = scaling.highFreqFactor;
            if (wavelength > context / low) {
                freq /= scaling.factor;
            } else if (wavelength >= context / high) {
                const double smooth = (context / wavelength - low) / (high - low);
                freq = (1.0 - smooth) * freq / scaling.factor + smooth * freq;
            }
        }
        // Linear scaling divides positions by the factor: the same as dividing frequencies.
        if (scaling.type == RopeScalingType::Linear) freq /= scaling.factor;
        inverse[i] = float(freq);
    }
    return inverse;
}

void applyRope(std::span<float> head, RopePairing pairing, double position,
               std::span<const float> inverseFrequencies) {
    const std::size_t half = head.size() / 2;
    if (inverseFrequencies.size() < half)
        throw ModelError("RoPE: " + std::to_string(inverseFrequencies.size()) +
                         " frequencies for a head of " + std::to_string(head.size()));
    for (std::size_t i = 0; i < half; ++i) {
        // The angle in double: a float product at angle ~8000 rad is already ~5e-4 rad off.
        const double angle = position * double(inverseFrequencies[i]);
        const float cosine = float(std::cos(angle));
        const float sine = float(std::sin(angle));
        const std::size_t a = pairing == RopePairing::Adjacent ? 2 * i : i;
        const std::size_t b = pairing == RopePairing::Adjacent ? 2 * i + 1 : i + half;
        const float x0 = head[a];
        const float x1 = head[b];
        head[a] = x0 * cosine - x1 * sine;
        head[b] = x0 * sine + x1 * cosine;
    }
}

struct ReferenceTransformer::Weights {
    struct Layer {
        std::span<const float> attnNorm, ffnNorm;
        std::span<const float> qBias, kBias, vBias;       // empty without q/k/v biases
        std::span<const float> qNorm, kNorm;              // ModelConfig::qkNorm
        std::span<const float> postAttnNorm, postFfnNorm; // ModelConfig::postNorms
        MatrixRows q, k, v, output, gate, up, down;
    };
    ReferenceWeights values;          // the fp32 path: every weight
    std::optional<WeightStore> store; // the stored path: views of the file's tensors
    ReferenceWeights storedVectors;   // the stored path: norms, biases, rope_freqs in f32
    MatrixRows embedding, outputHead; // outputHead is the embedding again when tied
    std::span<const float> outputNorm;
    std::span<const float> ropeFreqs; // empty: the file has none
    std::vector<Layer> layers;
};

namespace {

void checkShape(const ModelConfig& c, const std::string& source) {
    if (!c.layers || !c.hiddenSize || !c.heads || !c.kvHeads || !c.headDim || !c.ffnSize ||
        !c.vocabSize)
        throw ModelError(source, "config", std::nullopt, "a size is zero");
    if (c.heads % c.kvHeads != 0)
        throw ModelError(source, "kvHeads", std::nullopt,
                         std::to_string(c.heads) + " heads are not a multiple of " +
                             std::to_string(c.kvHeads) + " kv heads");
    if (c.headDim % 2 != 0)
        throw ModelError(source, "headDim", std::nullopt, "RoPE needs an even head dimension");
}

ModelError wrongSize(const std::string& source, const std::string& name, std::uint64_t has,
                     std::uint64_t expected) {
    return ModelError(source, name, std::nullopt,
                      "has " + std::to_string(has) + " values, expected " +
                          std::to_string(expected));
}

// Fills every field of `w` but the sources, through vector(name, elements, required) (empty
// when an optional tensor is absent) and matrix(name, rows, cols).
template <typename VectorOf, typename MatrixOf>
void resolveWeights(const ModelConfig& c, VectorOf vector, MatrixOf matrix, MatrixRows& embedding,
                    MatrixRows& outputHead, std::span<const float>& outputNorm,
                    std::span<const float>& ropeFreqs, auto& layers) {
    const std::size_t hidden = c.hiddenSize;
    const std::size_t qDim = std::size_t(c.heads) * c.headDim;
    const std::size_t kvDim = std::size_t(c.kvHeads) * c.headDim;
    embedding = matrix("token_embd.weight", c.vocabSize, hidden);
    outputNorm = vector("output_norm.weight", hidden, true);
    outputHead = c.tiedEmbeddings ? embedding : matrix("output.weight", c.vocabSize, hidden);
    layers.resize(c.layers);
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        auto& layer = layers[l];
        layer.attnNorm = vector(layerName(l, "attn_norm.weight"), hidden, true);
        layer.q = matrix(layerName(l, "attn_q.weight"), qDim, hidden);
        layer.k = matrix(layerName(l, "attn_k.weight"), kvDim, hidden);
        layer.v = matrix(layerName(l, "attn_v.weight"), kvDim, hidden);
        if (c.qkvBias) {
            layer.qBias = vector(layerName(l, "attn_q.bias"), qDim, true);
            layer.kBias = vector(layerName(l, "attn_k.bias"), kvDim, true);
            layer.vBias = vector(layerName(l, "attn_v.bias"), kvDim, true);
        }
        if (c.qkNorm) {
            layer.qNorm = vector(layerName(l, "attn_q_norm.weight"), c.headDim, true);
            layer.kNorm = vector(layerName(l, "attn_k_norm.weight"), c.headDim, true);
        }
        if (c.postNorms) {
            layer.postAttnNorm = vector(layerName(l, "post_attention_norm.weight"), hidden, true);
            layer.postFfnNorm = vector(layerName(l, "post_ffw_norm.weight"), hidden, true);
        }
        layer.output = matrix(layerName(l, "attn_output.weight"), hidden, qDim);
        layer.ffnNorm = vector(layerName(l, "ffn_norm.weight"), hidden, true);
        layer.gate = matrix(layerName(l, "ffn_gate.weight"), c.ffnSize, hidden);
        layer.up = matrix(layerName(l, "ffn_up.weight"), c.ffnSize, hidden);
        layer.down = matrix(layerName(l, "ffn_down.weight"), hidden, c.ffnSize);
    }
    ropeFreqs = vector("rope_freqs.weight", c.headDim / 2, false);
}

} // namespace

ReferenceTransformer::ReferenceTransformer(ModelConfig config, unsigned threads,
                                           const WeightsBuilder& build)
    : config_(std::move(config)),
      threads_(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {
    const std::string source = "reference transformer (" + config_.name + ")";
    checkShape(config_, source);
    weights_ = build(config_, source);
    ropeInvFreq_ = models::ropeInverseFrequencies(config_, weights_->ropeFreqs);
    for (std::uint32_t layer = 0; layer < config_.layers; ++layer)
        layerRopeInvFreq_.push_back(
            models::layerRopeInverseFrequencies(config_, layer, weights_->ropeFreqs));
    pool_ = std::make_shared<ReferenceThreadPool>(threads_);
}

ReferenceTransformer::ReferenceTransformer(ModelConfig config, ReferenceWeights weights,
                                           unsigned threads)
    : ReferenceTransformer(std::move(config), threads,
                           [&](const ModelConfig& c, const std::string& source) {
                               return fromFloatWeights(c, source, std::move(weights));
                           }) {}

ReferenceTransformer::ReferenceTransformer(ModelConfig config, const WeightStore& store,
                                           unsigned threads)
    : ReferenceTransformer(std::move(config), threads,
                           [&](const ModelConfig& c, const std::string& source) {
                               return fromStoredWeights(c, source, store);
                           }) {}

std::shared_ptr<const ReferenceTransformer::Weights>
ReferenceTransformer::fromFloatWeights(const ModelConfig& c, const std::string& source,
                                       ReferenceWeights weights) {
    auto w = std::make_shared<Weights>();
    w->values = std::move(weights);
    const ReferenceWeights& values = w->values;
    auto find = [&](const std::string& name, std::uint64_t elements,
                    bool required) -> const std::vector<float>* {
        const auto it = values.find(name);
        if (it == values.end()) {
            if (required) throw ModelError(source, name, std::nullopt, "tensor is missing");
            return nullptr;
        }
        if (it->second.size() != elements)
            throw wrongSize(source, name, it->second.size(), elements);
        return &it->second;
    };
    auto vector = [&](const std::string& name, std::uint64_t elements, bool required) {
        const auto* found = find(name, elements, required);
        return found ? std::span<const float>(*found) : std::span<const float>();
    };
    auto matrix = [&](const std::string& name, std::size_t rows, std::size_t cols) {
        return MatrixRows(find(name, std::uint64_t(rows) * cols, true)->data(), rows, cols);
    };
    resolveWeights(c, vector, matrix, w->embedding, w->outputHead, w->outputNorm, w->ropeFreqs,
                   w->layers);
    return w;
}

std::shared_ptr<const ReferenceTransformer::Weights>
ReferenceTransformer::fromStoredWeights(const ModelConfig& c, const std::string& source,
                                        const WeightStore& store) {
    auto w = std::make_shared<Weights>();
    // A copy of the store is its map of views plus the shared owners of the mappings.
    w->store.emplace(store);
    const WeightStore& views = *w->store;
    auto find = [&](const std::string& name, std::uint64_t elements,
                    bool required) -> const StoredTensor* {
        const StoredTensor* tensor = views.find(name);
        if (!tensor) {
            if (required) throw ModelError(source, name, std::nullopt, "tensor is missing");
            return nullptr;
        }
        if (tensor->elements() != elements)
            throw wrongSize(source, name, tensor->elements(), elements);
        const auto bytes = tensorBytes(tensor->type, elements);
        if (!bytes || *bytes != tensor->data.size())
            throw ModelError(source, name, std::nullopt,
                             "holds " + std::to_string(tensor->data.size()) + " bytes of " +
                                 std::string(tensorTypeName(tensor->type)) + " for " +
                                 std::to_string(elements) + " values");
        return tensor;
    };
    // Small vectors (norms, biases, rope_freqs) are read every step at every position: f32.
    auto vector = [&](const std::string& name, std::uint64_t elements, bool required) {
        if (!find(name, elements, required)) return std::span<const float>();
        const auto& values = w->storedVectors.emplace(name, views.dequantized(name)).first->second;
        return std::span<const float>(values);
    };
    auto matrix = [&](const std::string& name, std::size_t rows, std::size_t cols) {
        const StoredTensor& tensor = *find(name, std::uint64_t(rows) * cols, true);
        // Rows are dequantized one at a time: each must be whole blocks, cols values long.
        const auto rowBytes = tensorBytes(tensor.type, cols);
        if (tensor.cols() != cols || !rowBytes)
            throw ModelError(source, name, std::nullopt,
                             "rows of " + std::to_string(tensor.cols()) + " " +
                                 std::string(tensorTypeName(tensor.type)) + " values, expected " +
                                 std::to_string(cols) + " in whole blocks");
        return MatrixRows(tensor, rows, cols, std::size_t(*rowBytes));
    };
    resolveWeights(c, vector, matrix, w->embedding, w->outputHead, w->outputNorm, w->ropeFreqs,
                   w->layers);
    return w;
}

std::uint64_t ReferenceTransformer::weightBytes() const {
    const Weights& w = *weights_;
    std::uint64_t bytes = 0;
    for (const auto* copies : {&w.values, &w.storedVectors})
        for (const auto& [name, values] : *copies) bytes += values.size() * sizeof(float);
    // Stored matrices by the bytes they view; a tied output head views the embedding again.
    std::set<const std::uint8_t*> counted;
    auto view = [&](const MatrixRows& m) {
        if (!m.stored().empty() && counted.insert(m.stored().data()).second)
            bytes += m.stored().size();
    };
    view(w.embedding);
    view(w.outputHead);
    for (const auto& layer : w.layers)
        for (const auto* m :
             {&layer.q, &layer.k, &layer.v, &layer.output, &layer.gate, &layer.up, &layer.down})
            view(*m);
    return bytes;
}

ReferenceTransformer::KvCache ReferenceTransformer::newCache() const {
    KvCache cache;
    cache.k.resize(config_.layers);
    cache.v.resize(config_.layers);
    return cache;
}

std::vector<float> ReferenceTransformer::forward(std::span<const std::int32_t> tokens,
                                                 KvCache& cache, bool allLogits) const {
    const ModelConfig& c = config_;
    const std::size_t count = tokens.size();
    if (count == 0) return {};
    if (cache.k.size() != c.layers || cache.v.size() != c.layers)
        throw ModelError("KV cache has " + std::to_string(cache.k.size()) + " layers, the model " +
                         std::to_string(c.layers));
    for (std::uint32_t layer = 0; layer < c.layers; ++layer)
        if (cache.k[layer].size() < std::size_t(cache.length) * c.kvHeads * c.headDim ||
            cache.v[layer].size() < std::size_t(cache.length) * c.kvHeads * c.headDim)
            throw ModelError("KV cache claims " + std::to_string(cache.length) +
                             " positions but holds fewer in layer " + std::to_string(layer));
    for (std::int32_t token : tokens)
        if (token < 0 || std::uint32_t(token) >= c.vocabSize)
            throw ModelError("token id " + std::to_string(token) +
                             " is outside the vocabulary of " + std::to_string(c.vocabSize));

    const std::size_t hidden = c.hiddenSize;
    const std::size_t headDim = c.headDim;
    const std::size_t qDim = std::size_t(c.heads) * headDim;
    const std::size_t kvDim = std::size_t(c.kvHeads) * headDim;
    const std::size_t ffn = c.ffnSize;
    const std::size_t start = cache.length;
    const std::size_t group = c.heads / c.kvHeads;
    const float scale = c.attentionScaleValue();
    const float normOffset = c.normWeightOffset;
    const unsigned parts = pool_->parts();
    const Weights& w = *weights_;
    // Splits the rows of several products among the threads; each part does its share of
    // each, so q/k/v (or gate/up) cost one hand-off.
    auto project = [&](std::initializer_list<Projection> projections,
                       const std::vector<float>& input, std::size_t cols) {
        const std::vector<Projection> list(projections);
        pool_->run([&](unsigned part) {
            for (const Projection& p : list)
                projectRows(p, input, cols, count, p.rows * part / parts,
                            p.rows * (part + 1) / parts);
        });
    };

    // Residual stream, one row per new position.
    std::vector<float> x(count * hidden);
    for (std::size_t t = 0; t < count; ++t)
        w.embedding.copyRow(std::size_t(tokens[t]), &x[t * hidden]);
    if (c.embeddingScale != 1.0f)
        for (float& value : x) value *= c.embeddingScale;

    std::vector<float> normed(count * hidden);
    std::vector<float> q(count * qDim), k(count * kvDim), v(count * kvDim);
    std::vector<float> attention(count * qDim), projected(count * hidden);
    std::vector<float> gate(count * ffn), up(count * ffn);
    const std::size_t total = start + count;

    for (std::uint32_t layer = 0; layer < c.layers; ++layer) {
        // Attention block: x += Wo · attention(RoPE(Wq n), RoPE(Wk n), Wv n), n = norm(x).
        const Weights::Layer& lw = w.layers[layer];
        for (std::size_t t = 0; t < count; ++t)
            rmsNorm(&x[t * hidden], lw.attnNorm.data(), hidden, c.rmsNormEps, &normed[t * hidden],
                    normOffset);
        auto bias = [](std::span<const float> values) {
            return values.empty() ? nullptr : values.data();
        };
        project({{&lw.q, bias(lw.qBias), &q, qDim},
                 {&lw.k, bias(lw.kBias), &k, kvDim},
                 {&lw.v, bias(lw.vBias), &v, kvDim}},
                normed, hidden);
        // Q/K norm (qwen3, gemma3): each head RMS-normalized with one shared weight vector.
        if (c.qkNorm)
            for (std::size_t t = 0; t < count; ++t) {
                for (std::size_t h = 0; h < c.heads; ++h) {
                    float* head = &q[t * qDim + h * headDim];
                    rmsNorm(head, lw.qNorm.data(), headDim, c.rmsNormEps, head, normOffset);
                }
                for (std::size_t h = 0; h < c.kvHeads; ++h) {
                    float* head = &k[t * kvDim + h * headDim];
                    rmsNorm(head, lw.kNorm.data(), headDim, c.rmsNormEps, head, normOffset);
                }
            }
        const std::vector<float>& ropeInvFreq = layerRopeInvFreq_[layer];
        if (c.usesRope(layer))
            for (std::size_t t = 0; t < count; ++t) {
                const double position = double(start + t);
                for (std::size_t h = 0; h < c.heads; ++h)
                    applyRope(std::span<float>(&q[t * qDim + h * headDim], headDim), c.ropePairing,
                              position, ropeInvFreq);
                for (std::size_t h = 0; h < c.kvHeads; ++h)
                    applyRope(std::span<float>(&k[t * kvDim + h * headDim], headDim), c.ropePairing,
                              position, ropeInvFreq);
            }
        // A windowed layer's position p sees p - window + 1 .. p.
        const std::size_t window = c.windowed(layer) ? c.slidingWindow : 0;
        std::vector<float>& keys = cache.k[layer];
        std::vector<float>& values = cache.v[layer];
        keys.resize(start * kvDim);
        values.resize(start * kvDim);
        keys.insert(keys.end(), k.begin(), k.end());
        values.insert(values.end(), v.begin(), v.end());

        // Causal grouped-query attention: query head h reads kv head h / group; position
        // start + t sees positions 0 .. start + t. Heads are split among the threads.
        pool_->run([&](unsigned part) {
            std::vector<float> scores(total);
            for (std::size_t h = c.heads * part / parts; h < c.heads * (part + 1) / parts; ++h) {
                const std::size_t kvHead = h / group;
                for (std::size_t t = 0; t < count; ++t) {
                    const float* query = &q[t * qDim + h * headDim];
                    const std::size_t visible = start + t + 1;
                    const std::size_t first = window && visible > window ? visible - window : 0;
                    float maxScore = -INFINITY;
                    for (std::size_t p = first; p < visible; ++p) {
                        scores[p] =
                            dot(query, &keys[p * kvDim + kvHead * headDim], headDim) * scale;
                        maxScore = std::max(maxScore, scores[p]);
                    }
                    // Softmax with the maximum subtracted (no overflow); the denominator is a
                    // sum of up to context-length positive terms, kept in double.
                    double denominator = 0.0;
                    for (std::size_t p = first; p < visible; ++p) {
                        scores[p] = std::exp(scores[p] - maxScore);
                        denominator += scores[p];
                    }
                    const float inverse = float(1.0 / denominator);
                    float* out = &attention[t * qDim + h * headDim];
                    std::fill_n(out, headDim, 0.0f);
                    for (std::size_t p = first; p < visible; ++p) {
                        const float weight = scores[p] * inverse;
                        const float* value = &values[p * kvDim + kvHead * headDim];
                        for (std::size_t d = 0; d < headDim; ++d) out[d] += weight * value[d];
                    }
                }
            }
        });
        project({{&lw.output, nullptr, &projected, hidden}}, attention, qDim);
        // Post-norms (gemma3): the block's output is normalized before it joins x.
        auto postNorm = [&](std::span<const float> weight) {
            if (weight.empty()) return;
            for (std::size_t t = 0; t < count; ++t)
                rmsNorm(&projected[t * hidden], weight.data(), hidden, c.rmsNormEps,
                        &projected[t * hidden], normOffset);
        };
        postNorm(lw.postAttnNorm);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];

        // Feed-forward block (SwiGLU, or GeGLU): x += Wdown · (act(Wgate n) * (Wup n)),
        // n = norm(x).
        for (std::size_t t = 0; t < count; ++t)
            rmsNorm(&x[t * hidden], lw.ffnNorm.data(), hidden, c.rmsNormEps, &normed[t * hidden],
                    normOffset);
        project({{&lw.gate, nullptr, &gate, ffn}, {&lw.up, nullptr, &up, ffn}}, normed, hidden);
        if (c.activation == FfnActivation::GeluTanh)
            for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = geluTanh(gate[i]) * up[i];
        else
            for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
        project({{&lw.down, nullptr, &projected, hidden}}, gate, ffn);
        postNorm(lw.postFfnNorm);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];

        if (observer_)
            for (std::size_t t = 0; t < count; ++t)
                observer_(layer, std::uint32_t(start + t),
                          std::span<const float>(&x[t * hidden], hidden));
    }
    cache.length = std::uint32_t(total);

    // Final norm and output head (the embedding matrix again when tied), for the rows asked.
    const std::size_t first = allLogits ? 0 : count - 1;
    const std::size_t rows = count - first;
    std::vector<float> finalNormed(rows * hidden);
    for (std::size_t t = 0; t < rows; ++t)
        rmsNorm(&x[(first + t) * hidden], w.outputNorm.data(), hidden, c.rmsNormEps,
                &finalNormed[t * hidden], normOffset);
    std::vector<float> logits(rows * c.vocabSize);
    const Projection output{&w.outputHead, nullptr, &logits, c.vocabSize};
    pool_->run([&](unsigned part) {
        projectRows(output, finalNormed, hidden, rows, output.rows * part / parts,
                    output.rows * (part + 1) / parts);
    });
    return logits;
}

std::vector<float>
ReferenceTransformer::forwardUncached(std::span<const std::int32_t> sequence) const {
    KvCache cache = newCache();
    return forward(sequence, cache, false);
}

} // namespace inferscope::models
