#pragma once
// Named host tensors of a model, as stored in its file(s) (views into memory mappings),
// dequantized to f32 on request. Names are canonical GGUF names whatever the file format:
//   token_embd.weight, output_norm.weight, output.weight (absent when embeddings are tied),
//   blk.N.attn_norm.weight, blk.N.attn_q.weight, blk.N.attn_k.weight, blk.N.attn_v.weight,
//   blk.N.attn_q.bias ... (qwen2), blk.N.attn_output.weight, blk.N.ffn_norm.weight,
//   blk.N.ffn_gate.weight, blk.N.ffn_up.weight, blk.N.ffn_down.weight, rope_freqs.weight,
//   and where the architecture has them blk.N.attn_q_norm.weight, blk.N.attn_k_norm.weight
//   (qwen3, gemma3), blk.N.post_attention_norm.weight, blk.N.post_ffw_norm.weight (gemma3).
//   Fused matrices (phi3's attn_qkv, its gate|up) are split into these names at load.
// Shapes are in GGUF order: shape[0] is the contiguous dimension (a matrix with `rows`
// outputs and `cols` inputs has shape {cols, rows}), so every matrix is row-major [rows][cols].
#include "models/formats/MappedFile.hpp"
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace inferscope::models {

struct StoredTensor {
    std::string name;
    TensorType type = TensorType::F32;
    std::vector<std::uint64_t> shape; // GGUF order, 1..4 dims
    std::span<const std::uint8_t> data;
    std::uint64_t fileOffset = 0; // where the data starts in its file (for error messages)

    std::uint64_t elements() const;
    std::uint64_t rows() const; // product of shape[1..]
    std::uint64_t cols() const { return shape.empty() ? 0 : shape[0]; }
};

class WeightStore {
public:
    // Keeps `owner` (e.g. the memory mappings) alive as long as the views are used.
    void setOwner(std::shared_ptr<const void> owner) { owners_.push_back(std::move(owner)); }
    // Keeps a file mapping the views point into alive, and lets releaseResidentPages drop it.
    void addMapping(std::shared_ptr<const MappedFile> mapping);
    // Drops the file mappings' pages from resident memory (see MappedFile); the views stay
    // valid. Tensors held in memory (not mapped) are untouched.
    void releaseResidentPages() const;
    // The same for one tensor's pages, when it lies in a mapping (an engine that has
    // uploaded it; a tensor held in memory is untouched). An unknown name is ignored.
    void releaseResidentPages(const std::string& name) const;
    void add(StoredTensor tensor);        // throws ModelError on a duplicate name
    void remove(const std::string& name); // no-op when absent

    bool contains(const std::string& name) const;
    const StoredTensor& at(const std::string& name) const; // throws ModelError if missing
    const StoredTensor* find(const std::string& name) const;
    const std::map<std::string, StoredTensor>& tensors() const { return tensors_; }

    std::vector<float> dequantized(const std::string& name) const;
    std::uint64_t totalElements() const;
    std::map<TensorType, std::uint64_t> bytesByType() const;

private:
    std::map<std::string, StoredTensor> tensors_;
    std::vector<std::shared_ptr<const void>> owners_;
    std::vector<std::shared_ptr<const MappedFile>> mappings_;
};

} // namespace inferscope::models
