#pragma once
// The CPU reference transformer: plain fp32 loops that follow the equations, the oracle for
// every GPU test. Llama / Mistral / Qwen2 family: RMSNorm, RoPE (either pairing, with
// linear, llama3 or LongRope scaling), grouped-query attention, optional q/k/v biases, SwiGLU,
// tied or separate output head; and what qwen3, gemma3, phi3 and smollm3 add (ModelConfig):
// Q/K norm, post-norms, (1 + w) norms, GeGLU, embedding and attention scales, sliding-window
// layers with their own RoPE base, NoPE layers. Matrix-vector products are split across
// threads.
//
// It computes either from the stored tensors of a WeightStore (views of the file: each
// matrix row is dequantized to f32 as the products reach it, so host memory stays what the
// file takes) or from an fp32 copy of every weight (ReferenceWeights: tests and the
// quantization lab substitute quantized-then-dequantized matrices there). Both give the same
// bits: a stored row dequantizes to exactly the values WeightStore::dequantized holds, and
// the products sum in the same order.
#include "models/ModelConfig.hpp"
#include "models/WeightStore.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace inferscope::models {

class ReferenceThreadPool; // persistent workers for the row-split products
                           // (ReferenceTransformer.cpp)

// f32 weights by canonical name (see WeightStore.hpp). Tests may substitute quantized
// -then-dequantized matrices here to check a GPU scheme against the same weights.
using ReferenceWeights = std::map<std::string, std::vector<float>>;
ReferenceWeights dequantizeAll(const WeightStore& store);

// RoPE frequencies (radians per position) of each of the headDim/2 pairs: theta^(-2i/d),
// divided by rope_freqs.weight when the file has it (Llama 3 GGUF), else adjusted by
// llama3 scaling (wavelength rule), and divided by the factor for linear scaling.
std::vector<float> ropeInverseFrequencies(const ModelConfig& config,
                                          std::span<const float> ropeFreqs = {});
// The table of one layer: the model's (above) for global layers, the window base without
// scaling for windowed layers, zeros (no rotation) for NoPE layers.
std::vector<float> layerRopeInverseFrequencies(const ModelConfig& config, std::uint32_t layer,
                                               std::span<const float> ropeFreqs = {});
// theta^(-2i/d) with `scaling` (LongRope: divided by its factors) and, where given, divided by
// ropeFreqs (rope_freqs.weight).
std::vector<float> ropeFrequencyTable(float theta, const RopeScaling& scaling,
                                      std::uint32_t headDim, std::span<const float> ropeFreqs);
// Rotates each pair of one head (headDim values) by position * frequency of the pair:
// pairs (2i, 2i+1) for Adjacent, (i, i + headDim/2) for SplitHalf.
void applyRope(std::span<float> head, RopePairing pairing, double position,
               std::span<const float> inverseFrequencies);

class ReferenceTransformer {
public:
    struct KvCache {
        std::uint32_t length = 0;          // positions held
        std::vector<std::vector<float>> k; // per layer: [position][kvHeads * headDim]
        std::vector<std::vector<float>> v;
    };
    // Called with the residual stream after each layer (layer index, position, values).
    using ResidualObserver =
        std::function<void(std::uint32_t layer, std::uint32_t position, std::span<const float>)>;

    ReferenceTransformer(ModelConfig config, ReferenceWeights weights, unsigned threads = 0);
    // Keeps views of the stored tensors (a copy of the store: its map of views and the
    // owners of its mappings); norm weights, biases and rope_freqs are kept as f32.
    ReferenceTransformer(ModelConfig config, const WeightStore& store, unsigned threads = 0);

    const ModelConfig& config() const { return config_; }
    // Host bytes of the weights it reads: the f32 values it owns plus the stored (mapped)
    // matrices it views, each counted once.
    std::uint64_t weightBytes() const;
    // Per-pair RoPE frequencies (radians per position) after scaling and rope_freqs.
    const std::vector<float>& ropeInverseFrequencies() const { return ropeInvFreq_; }
    KvCache newCache() const;

    // Runs tokens at positions cache.length ... and appends their K/V to the cache.
    // Returns logits: one row of vocabSize per token when allLogits, else the last row.
    std::vector<float> forward(std::span<const std::int32_t> tokens, KvCache& cache,
                               bool allLogits = false) const;
    // Uncached: recomputes the whole sequence from scratch (a fresh cache) and returns
    // the logits of its last position. Really does the O(T^2) work per call.
    std::vector<float> forwardUncached(std::span<const std::int32_t> sequence) const;

    void setResidualObserver(ResidualObserver observer) { observer_ = std::move(observer); }
    unsigned threads() const { return threads_; }

private:
    struct Weights; // the matrices and vectors the loops read (ReferenceTransformer.cpp)
    using WeightsBuilder =
        std::function<std::shared_ptr<const Weights>(const ModelConfig&, const std::string&)>;

    // Both public constructors: check the shape, build the weights, then the RoPE table and
    // the thread pool. `build` gets the config and the name errors are reported under.
    ReferenceTransformer(ModelConfig config, unsigned threads, const WeightsBuilder& build);
    static std::shared_ptr<const Weights>
    fromFloatWeights(const ModelConfig& c, const std::string& source, ReferenceWeights weights);
    static std::shared_ptr<const Weights>
    fromStoredWeights(const ModelConfig& c, const std::string& source, const WeightStore& store);

    ModelConfig config_;
    // Immutable once built; shared by copies.
    std::shared_ptr<const Weights> weights_;
    unsigned threads_;
    ResidualObserver observer_;
    std::vector<float> ropeInvFreq_;
    std::vector<std::vector<float>> layerRopeInvFreq_; // per layer (window base, NoPE zeros)
    // Shared by copies: its workers live as long as any copy; calls into it are serialized.
    std::shared_ptr<ReferenceThreadPool> pool_;
};

} // namespace inferscope::models
