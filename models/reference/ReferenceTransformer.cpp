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

// One matrix-vector product over many positions: out[t][r] = sum_c W[r][c] x[t][c] + b[r].
struct Projection {
    const std::vector<float>* weight = nullptr; // [rows][cols]
    const std::vector<float>* bias = nullptr;   // [rows] or null
    std::vector<float>* output = nullptr;       // [positions][rows]
    std::size_t rows = 0;
};

// Rows [begin, end) of one projection for all positions. Positions are taken in tiles that
// stay in cache while the rows stream past, four at a time per row.
void projectRows(const Projection& p, const std::vector<float>& input, std::size_t cols,
                 std::size_t positions, std::size_t begin, std::size_t end) {
    constexpr std::size_t kTile = 32;
    const float* weight = p.weight->data();
    float* output = p.output->data();
    for (std::size_t tile = 0; tile < positions; tile += kTile) {
        const std::size_t tileEnd = std::min(positions, tile + kTile);
        for (std::size_t r = begin; r < end; ++r) {
            const float* row = weight + r * cols;
            const float bias = p.bias ? (*p.bias)[r] : 0.0f;
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
void rmsNorm(const float* x, const float* weight, std::size_t n, float eps, float* out) {
    double sumSquares = 0.0;
    for (std::size_t i = 0; i < n; ++i) sumSquares += double(x[i]) * double(x[i]);
    const float scale = float(1.0 / std::sqrt(sumSquares / double(n) + double(eps)));
    for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * weight[i];
}

float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

std::string layerName(std::uint32_t layer, const char* tensor) {
    return layerTensorName(layer, tensor);
}

} // namespace

std::vector<float> ropeInverseFrequencies(const ModelConfig& config,
                                          std::span<const float> ropeFreqs) {
    const std::size_t half = config.headDim / 2;
    if (!ropeFreqs.empty() && ropeFreqs.size() != half)
        throw ModelError("rope_freqs.weight has " + std::to_string(ropeFreqs.size()) +
                         " values, expected " + std::to_string(half));
    const RopeScaling& scaling = config.ropeScaling;
    std::vector<float> inverse(half);
    for (std::size_t i = 0; i < half; ++i) {
        double freq = std::pow(double(config.ropeTheta), -2.0 * double(i) / double(config.headDim));
        if (!ropeFreqs.empty()) {
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

ReferenceTransformer::ReferenceTransformer(ModelConfig config, ReferenceWeights weights,
                                           unsigned threads)
    : config_(std::move(config)), weights_(std::move(weights)),
      threads_(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {
    const ModelConfig& c = config_;
    const std::string source = "reference transformer (" + c.name + ")";
    if (!c.layers || !c.hiddenSize || !c.heads || !c.kvHeads || !c.headDim || !c.ffnSize ||
        !c.vocabSize)
        throw ModelError(source, "config", std::nullopt, "a size is zero");
    if (c.heads % c.kvHeads != 0)
        throw ModelError(source, "kvHeads", std::nullopt,
                         std::to_string(c.heads) + " heads are not a multiple of " +
                             std::to_string(c.kvHeads) + " kv heads");
    if (c.headDim % 2 != 0)
        throw ModelError(source, "headDim", std::nullopt, "RoPE needs an even head dimension");

    auto expect = [&](const std::string& name, std::uint64_t elements) {
        const auto it = weights_.find(name);
        if (it == weights_.end()) throw ModelError(source, name, std::nullopt, "tensor is missing");
        if (it->second.size() != elements)
            throw ModelError(source, name, std::nullopt,
                             "has " + std::to_string(it->second.size()) + " values, expected " +
                                 std::to_string(elements));
    };
    const std::uint64_t hidden = c.hiddenSize;
    const std::uint64_t qDim = std::uint64_t(c.heads) * c.headDim;
    const std::uint64_t kvDim = std::uint64_t(c.kvHeads) * c.headDim;
    expect("token_embd.weight", std::uint64_t(c.vocabSize) * hidden);
    expect("output_norm.weight", hidden);
    if (!c.tiedEmbeddings) expect("output.weight", std::uint64_t(c.vocabSize) * hidden);
    for (std::uint32_t layer = 0; layer < c.layers; ++layer) {
        expect(layerName(layer, "attn_norm.weight"), hidden);
        expect(layerName(layer, "attn_q.weight"), qDim * hidden);
        expect(layerName(layer, "attn_k.weight"), kvDim * hidden);
        expect(layerName(layer, "attn_v.weight"), kvDim * hidden);
        if (c.qkvBias) {
            expect(layerName(layer, "attn_q.bias"), qDim);
            expect(layerName(layer, "attn_k.bias"), kvDim);
            expect(layerName(layer, "attn_v.bias"), kvDim);
        }
        expect(layerName(layer, "attn_output.weight"), hidden * qDim);
        expect(layerName(layer, "ffn_norm.weight"), hidden);
        expect(layerName(layer, "ffn_gate.weight"), std::uint64_t(c.ffnSize) * hidden);
        expect(layerName(layer, "ffn_up.weight"), std::uint64_t(c.ffnSize) * hidden);
        expect(layerName(layer, "ffn_down.weight"), hidden * c.ffnSize);
    }

    const std::size_t half = c.headDim / 2;
    const auto ropeFreqs = weights_.find("rope_freqs.weight");
    if (ropeFreqs != weights_.end() && ropeFreqs->second.size() != half)
        throw ModelError(source, "rope_freqs.weight", std::nullopt,
                         "has " + std::to_string(ropeFreqs->second.size()) + " values, expected " +
                             std::to_string(half));
    ropeInvFreq_ = models::ropeInverseFrequencies(c, ropeFreqs != weights_.end()
                                                         ? std::span<const float>(ropeFreqs->second)
                                                         : std::span<const float>());
    pool_ = std::make_shared<ReferenceThreadPool>(threads_);
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
    const float scale = 1.0f / std::sqrt(float(headDim));
    const unsigned parts = pool_->parts();
    auto tensor = [&](const std::string& name) -> const std::vector<float>& {
        return weights_.at(name);
    };
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
    const std::vector<float>& embedding = tensor("token_embd.weight");
    for (std::size_t t = 0; t < count; ++t)
        std::copy_n(&embedding[std::size_t(tokens[t]) * hidden], hidden, &x[t * hidden]);

    std::vector<float> normed(count * hidden);
    std::vector<float> q(count * qDim), k(count * kvDim), v(count * kvDim);
    std::vector<float> attention(count * qDim), projected(count * hidden);
    std::vector<float> gate(count * ffn), up(count * ffn);
    const std::size_t total = start + count;

    for (std::uint32_t layer = 0; layer < c.layers; ++layer) {
        // Attention block: x += Wo · attention(RoPE(Wq n), RoPE(Wk n), Wv n), n = norm(x).
        const std::vector<float>& attnNorm = tensor(layerName(layer, "attn_norm.weight"));
        for (std::size_t t = 0; t < count; ++t)
            rmsNorm(&x[t * hidden], attnNorm.data(), hidden, c.rmsNormEps, &normed[t * hidden]);
        const auto* qBias = c.qkvBias ? &tensor(layerName(layer, "attn_q.bias")) : nullptr;
        const auto* kBias = c.qkvBias ? &tensor(layerName(layer, "attn_k.bias")) : nullptr;
        const auto* vBias = c.qkvBias ? &tensor(layerName(layer, "attn_v.bias")) : nullptr;
        project({{&tensor(layerName(layer, "attn_q.weight")), qBias, &q, qDim},
                 {&tensor(layerName(layer, "attn_k.weight")), kBias, &k, kvDim},
                 {&tensor(layerName(layer, "attn_v.weight")), vBias, &v, kvDim}},
                normed, hidden);
        for (std::size_t t = 0; t < count; ++t) {
            const double position = double(start + t);
            for (std::size_t h = 0; h < c.heads; ++h)
                applyRope(std::span<float>(&q[t * qDim + h * headDim], headDim), c.ropePairing,
                          position, ropeInvFreq_);
            for (std::size_t h = 0; h < c.kvHeads; ++h)
                applyRope(std::span<float>(&k[t * kvDim + h * headDim], headDim), c.ropePairing,
                          position, ropeInvFreq_);
        }
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
                    float maxScore = -INFINITY;
                    for (std::size_t p = 0; p < visible; ++p) {
                        scores[p] =
                            dot(query, &keys[p * kvDim + kvHead * headDim], headDim) * scale;
                        maxScore = std::max(maxScore, scores[p]);
                    }
                    // Softmax with the maximum subtracted (no overflow); the denominator is a
                    // sum of up to context-length positive terms, kept in double.
                    double denominator = 0.0;
                    for (std::size_t p = 0; p < visible; ++p) {
                        scores[p] = std::exp(scores[p] - maxScore);
                        denominator += scores[p];
                    }
                    const float inverse = float(1.0 / denominator);
                    float* out = &attention[t * qDim + h * headDim];
                    std::fill_n(out, headDim, 0.0f);
                    for (std::size_t p = 0; p < visible; ++p) {
                        const float weight = scores[p] * inverse;
                        const float* value = &values[p * kvDim + kvHead * headDim];
                        for (std::size_t d = 0; d < headDim; ++d) out[d] += weight * value[d];
                    }
                }
            }
        });
        project({{&tensor(layerName(layer, "attn_output.weight")), nullptr, &projected, hidden}},
                attention, qDim);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];

        // Feed-forward block (SwiGLU): x += Wdown · (silu(Wgate n) * (Wup n)), n = norm(x).
        const std::vector<float>& ffnNorm = tensor(layerName(layer, "ffn_norm.weight"));
        for (std::size_t t = 0; t < count; ++t)
            rmsNorm(&x[t * hidden], ffnNorm.data(), hidden, c.rmsNormEps, &normed[t * hidden]);
        project({{&tensor(layerName(layer, "ffn_gate.weight")), nullptr, &gate, ffn},
                 {&tensor(layerName(layer, "ffn_up.weight")), nullptr, &up, ffn}},
                normed, hidden);
        for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
        project({{&tensor(layerName(layer, "ffn_down.weight")), nullptr, &projected, hidden}}, gate,
                ffn);
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
    const std::vector<float>& outputNorm = tensor("output_norm.weight");
    std::vector<float> finalNormed(rows * hidden);
    for (std::size_t t = 0; t < rows; ++t)
        rmsNorm(&x[(first + t) * hidden], outputNorm.data(), hidden, c.rmsNormEps,
                &finalNormed[t * hidden]);
    const std::vector<float>& head = c.tiedEmbeddings ? embedding : tensor("output.weight");
    std::vector<float> logits(rows * c.vocabSize);
    const Projection output{&head, nullptr, &logits, c.vocabSize};
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
