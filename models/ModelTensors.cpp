#include "models/ModelTensors.hpp"

#include "models/ModelError.hpp"
#include "models/formats/TensorNames.hpp"

namespace inferscope::models {

namespace {

std::string shapeText(const std::vector<std::uint64_t>& shape) {
    std::string text = "{";
    for (std::size_t i = 0; i < shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "}";
}

} // namespace

std::map<std::string, std::vector<std::uint64_t>> expectedTensorShapes(const ModelConfig& config,
                                                                       bool withOutput) {
    const std::uint64_t hidden = config.hiddenSize;
    const std::uint64_t queryWidth = std::uint64_t{config.heads} * config.headDim;
    const std::uint64_t kvWidth = std::uint64_t{config.kvHeads} * config.headDim;
    std::map<std::string, std::vector<std::uint64_t>> shapes{
        {"token_embd.weight", {hidden, config.vocabSize}},
        {"output_norm.weight", {hidden}},
    };
    if (withOutput) shapes["output.weight"] = {hidden, config.vocabSize};
    for (std::uint32_t layer = 0; layer < config.layers; ++layer) {
        const std::string block = layerTensorPrefix(layer);
        shapes[block + "attn_norm.weight"] = {hidden};
        shapes[block + "ffn_norm.weight"] = {hidden};
        shapes[block + "attn_q.weight"] = {hidden, queryWidth};
        shapes[block + "attn_k.weight"] = {hidden, kvWidth};
        shapes[block + "attn_v.weight"] = {hidden, kvWidth};
        shapes[block + "attn_output.weight"] = {queryWidth, hidden};
        shapes[block + "ffn_gate.weight"] = {hidden, config.ffnSize};
        shapes[block + "ffn_up.weight"] = {hidden, config.ffnSize};
        shapes[block + "ffn_down.weight"] = {config.ffnSize, hidden};
        if (config.qkvBias) {
            shapes[block + "attn_q.bias"] = {queryWidth};
            shapes[block + "attn_k.bias"] = {kvWidth};
            shapes[block + "attn_v.bias"] = {kvWidth};
        }
        if (config.qkNorm) {
            shapes[block + "attn_q_norm.weight"] = {config.headDim};
            shapes[block + "attn_k_norm.weight"] = {config.headDim};
        }
        if (config.postNorms) {
            shapes[block + "post_attention_norm.weight"] = {hidden};
            shapes[block + "post_ffw_norm.weight"] = {hidden};
        }
    }
    return shapes;
}

void splitFusedMatrix(WeightStore& store, const std::string& fusedName,
                      const std::vector<std::pair<std::string, std::uint64_t>>& parts,
                      std::uint64_t cols, const std::string& file) {
    const StoredTensor* found = store.find(fusedName);
    if (!found) throw ModelError(file, fusedName, std::nullopt, "required tensor is missing");
    const StoredTensor fused = *found;
    std::uint64_t rows = 0;
    for (const auto& part : parts) rows += part.second;
    const std::vector<std::uint64_t> expected{cols, rows};
    if (fused.shape != expected)
        throw ModelError(file, fusedName, fused.fileOffset,
                         "fused tensor has shape " + shapeText(fused.shape) + ", expected " +
                             shapeText(expected));
    const auto rowBytes = tensorBytes(fused.type, cols);
    if (!rowBytes || *rowBytes * rows != fused.data.size())
        throw ModelError(file, fusedName, fused.fileOffset,
                         "rows of " + std::to_string(cols) + " " +
                             std::string(tensorTypeName(fused.type)) +
                             " values are not whole blocks, or the data has the wrong size");
    store.remove(fusedName);
    std::uint64_t firstRow = 0;
    for (const auto& [name, partRows] : parts) {
        StoredTensor part;
        part.name = name;
        part.type = fused.type;
        part.shape = {cols, partRows};
        part.data = fused.data.subspan(firstRow * *rowBytes, partRows * *rowBytes);
        part.fileOffset = fused.fileOffset + firstRow * *rowBytes;
        store.add(std::move(part));
        firstRow += partRows;
    }
}

} // namespace inferscope::models
