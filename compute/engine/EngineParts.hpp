#pragma once
// The engine's private parts, shared by its three sources: Engine.cpp (building, steps),
// EngineWeights.cpp (weight residency: upload, pack, re-pack) and EngineProbes.cpp (what a
// step reads back besides its logits). Not for use outside compute/engine.
#include "compute/engine/Engine.hpp"
#include "models/formats/TensorNames.hpp"

namespace inferscope::compute {

inline std::string layerName(std::uint32_t layer, const char* suffix) {
    return models::layerTensorName(layer, suffix);
}

struct Engine::Layer {
    RowChunkedMatrix qkv;    // rows: Q heads, K heads, V heads (chunks of whole heads)
    RowChunkedMatrix output; // attn_output
    RowChunkedMatrix gateUp; // rows: gate, then up (a chunk: its gate rows, then its up rows)
    RowChunkedMatrix down;
    Buffer attnNorm;
    Buffer ffnNorm;
    Buffer qkvBias;
    Buffer qNorm, kNorm;               // ModelConfig::qkNorm
    Buffer postAttnNorm, postFfnNorm;  // ModelConfig::postNorms
    const Buffer* ropeTable = nullptr; // the layer's RoPE frequencies (Buffers)
    bool windowed = false;             // sliding-window layer: the window pool and tables
    Buffer kv;                         // this layer's KV blocks (f16)
};

struct Engine::Buffers {
    RowChunkedMatrix embedding;
    RowChunkedMatrix outputHead; // empty when the embedding is tied
    Buffer outputNorm;
    Buffer ropeInvFrequency;  // the model's RoPE (global layers)
    Buffer ropeWindow;        // sliding-window layers' base, unscaled (if any)
    Buffer ropeNone;          // zeros: NoPE layers (if any)
    Buffer qkvRows;           // Q/K-norm models: Q|K|V rows before qk_norm_rope
    Buffer blockOutput;       // post-norm models: a block's output before its norm
    Buffer windowBlockTables; // sliding-window layers' block tables
    std::uint32_t qkvStride = 0;
    std::uint32_t hiddenStride = 0, queryStride = 0, ffnStride = 0;
    Buffer hidden, queries, attention, ffn;
    Buffer arrivals; // zero between dispatches (Kernels::fusesAttention)
    Buffer tokenIds, tokenInfo, blockTables, gather;
    Buffer logits, argmax;
    Buffer residualMax;
    Buffer residualStream; // empty until ProbeOptions::residualStream first runs
    std::uint64_t activationBytes = 0;
    const RowChunkedMatrix& head() const { return outputHead.empty() ? embedding : outputHead; }
};

} // namespace inferscope::compute
