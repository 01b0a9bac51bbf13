#include "compute/experiments/run/ModelInfo.hpp"

#include <cstdio>
#include <map>

namespace inferscope::compute::experiments {

namespace {
const char* pairingName(models::RopePairing pairing) {
    return pairing == models::RopePairing::Adjacent ? "adjacent pairs (GGUF llama)"
                                                    : "split half (HF / qwen2)";
}
const char* scalingName(models::RopeScalingType type) {
    switch (type) {
    case models::RopeScalingType::None:
        return "none";
    case models::RopeScalingType::Linear:
        return "linear";
    case models::RopeScalingType::Llama3:
        return "llama3";
    case models::RopeScalingType::LongRope:
        return "LongRope (short factors)";
    }
    return "?";
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}
} // namespace

Table modelInfo(const models::LoadedModel& model) {
    const auto& c = model.config;
    Table t;
    t.id = "model-info";
    t.title = "Model: " + (c.name.empty() ? model.path.filename().string() : c.name);
    t.addColumn("property").addColumn("value");
    auto row = [&](std::string name, Cell value) { t.addRow({std::move(name), std::move(value)}); };
    row("file", model.path.string());
    row("format", model.format == models::ModelFormat::Gguf ? "GGUF" : "safetensors");
    row("architecture", c.architecture);
    row("parameters", static_cast<std::int64_t>(model.weights.totalElements()));
    row("layers", static_cast<std::int64_t>(c.layers));
    row("hidden size", static_cast<std::int64_t>(c.hiddenSize));
    row("query heads", static_cast<std::int64_t>(c.heads));
    row("KV heads", static_cast<std::int64_t>(c.kvHeads));
    row("head dim", static_cast<std::int64_t>(c.headDim));
    row("attention", c.kvHeads == c.heads ? std::string("MHA")
                     : c.kvHeads == 1     ? std::string("MQA")
                                          : "GQA (" + std::to_string(c.queryGroupSize()) +
                                            " query heads per KV head)");
    row("FFN size", static_cast<std::int64_t>(c.ffnSize));
    row("vocabulary", static_cast<std::int64_t>(c.vocabSize));
    row("context length", static_cast<std::int64_t>(c.contextLength));
    row("RoPE theta", static_cast<double>(c.ropeTheta));
    row("RoPE pairing", pairingName(c.ropePairing));
    row("RoPE scaling", scalingName(c.ropeScaling.type));
    row("RMSNorm epsilon", static_cast<double>(c.rmsNormEps));
    row("tied embeddings", c.tiedEmbeddings ? "yes" : "no");
    row("q/k/v biases", c.qkvBias ? "yes" : "no");
    row("Q/K norm", c.qkNorm ? "yes (per head, before RoPE)" : "no");
    row("post-norms", c.postNorms ? "yes (attention and FFN outputs)" : "no");
    row("FFN",
        c.activation == models::FfnActivation::GeluTanh ? "GeGLU (GELU, tanh)" : "SwiGLU (SiLU)");
    if (c.embeddingScale != 1.0f) row("embedding scale", static_cast<double>(c.embeddingScale));
    row("attention scale", static_cast<double>(c.attentionScaleValue()));
    if (c.windowedLayers() > 0)
        row("sliding window", std::to_string(c.slidingWindow) + " positions on " +
                                  std::to_string(c.windowedLayers()) + " of " +
                                  std::to_string(c.layers) + " layers (RoPE theta " +
                                  number(c.ropeThetaWindow) + "); " +
                                  std::to_string(c.globalLayers()) + " global");
    if (!c.noRopeLayers.empty())
        row("layers without RoPE", static_cast<std::int64_t>(c.noRopeLayers.size()));
    row("file bytes", static_cast<std::int64_t>(model.fileBytes));
    t.columns[1].precision = -1;
    return t;
}

Table weightBytesByType(const models::LoadedModel& model) {
    std::map<models::TensorType, std::pair<std::uint64_t, std::uint64_t>> byType; // elems, bytes
    for (const auto& [name, tensor] : model.weights.tensors()) {
        auto& entry = byType[tensor.type];
        entry.first += tensor.elements();
        entry.second += tensor.data.size();
    }
    Table t;
    t.id = "weight-bytes";
    t.title = "Stored weights by tensor type";
    t.addColumn("type")
        .addColumn("parameters")
        .addColumn("bytes", "bytes")
        .addColumn("bits per weight", "", 3);
    std::uint64_t totalElements = 0, totalBytes = 0;
    for (const auto& [type, entry] : byType) {
        t.addRow({std::string(models::tensorTypeName(type)), static_cast<std::int64_t>(entry.first),
                  static_cast<std::int64_t>(entry.second),
                  entry.first
                      ? 8.0 * static_cast<double>(entry.second) / static_cast<double>(entry.first)
                      : 0.0});
        totalElements += entry.first;
        totalBytes += entry.second;
    }
    t.addRow({std::string("total"), static_cast<std::int64_t>(totalElements),
              static_cast<std::int64_t>(totalBytes),
              totalElements
                  ? 8.0 * static_cast<double>(totalBytes) / static_cast<double>(totalElements)
                  : 0.0});
    return t;
}

Table kvCacheBytes(const models::ModelConfig& c) {
    Table t;
    t.id = "kv-cache-bytes";
    t.title = "KV cache per token = 2 (K,V) x " + std::to_string(c.layers) + " layers x " +
              std::to_string(c.kvHeads) + " KV heads x " + std::to_string(c.headDim) +
              " head dim x bytes";
    t.addColumn("element")
        .addColumn("bytes per token", "bytes")
        .addColumn("bytes per 1,000 tokens", "bytes");
    struct Element {
        const char* name;
        std::uint32_t bytes;
    };
    // Sliding-window layers stop growing at the window: the bytes of 1,000 tokens (and of
    // any length) follow kvCacheBytes, the split of global and windowed layers.
    const bool windowed = c.windowedLayers() > 0;
    if (windowed)
        t.addColumn("global layers per token", "bytes")
            .addColumn("windowed layers, at most", "bytes");
    for (Element e : {Element{"fp32", 4}, Element{"fp16", 2}, Element{"int8", 1}}) {
        auto perToken = static_cast<std::int64_t>(c.kvBytesPerToken(e.bytes));
        const auto perThousand = static_cast<std::int64_t>(c.kvCacheBytes(1000, e.bytes));
        if (!windowed) {
            t.addRow({std::string(e.name), perToken, perThousand});
            continue;
        }
        const auto perLayer = static_cast<std::int64_t>(c.kvBytesPerTokenPerLayer(e.bytes));
        t.addRow({std::string(e.name), perToken, perThousand,
                  perLayer * static_cast<std::int64_t>(c.globalLayers()),
                  perLayer * static_cast<std::int64_t>(c.windowedLayers()) *
                      static_cast<std::int64_t>(c.slidingWindow)});
    }
    if (windowed)
        t.notes.push_back(
            std::to_string(c.windowedLayers()) + " of " + std::to_string(c.layers) +
            " layers attend to the last " + std::to_string(c.slidingWindow) +
            " positions only, so their KV stops growing there: bytes per token is every "
            "layer's until the window fills, then only the " +
            std::to_string(c.globalLayers()) + " global layers' (fp16 at 8,192 tokens: " +
            groupThousands(static_cast<std::int64_t>(c.kvCacheBytes(8192))) + " bytes, not " +
            groupThousands(static_cast<std::int64_t>(8192 * c.kvBytesPerToken())) + ").");
    if (c.kvHeads != c.heads) {
        models::ModelConfig mha = c;
        mha.kvHeads = c.heads;
        t.notes.push_back("With full multi-head attention (" + std::to_string(c.heads) +
                          " KV heads) fp16 would need " +
                          groupThousands(static_cast<std::int64_t>(mha.kvBytesPerToken(2))) +
                          " bytes per token: " + std::to_string(c.queryGroupSize()) + "x more.");
    }
    return t;
}

} // namespace inferscope::compute::experiments
