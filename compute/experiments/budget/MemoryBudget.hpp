#pragma once
// Chapter item 14, the memory budget: weights + KV bytes per token x resident tokens must fit
// in device memory. Solved for the context tokens that fit and for the users that fit at a
// chosen context each, per model shape, weight precision and device size.
#include "compute/Table.hpp"
#include "models/ModelConfig.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

// What the budget needs of a model: its shape and its parameter count.
struct ModelShape {
    std::string name;
    std::uint32_t layers = 0;
    std::uint32_t heads = 0; // query heads (the multi-head variant has as many KV heads)
    std::uint32_t kvHeads = 0;
    std::uint32_t headDim = 0;
    std::uint64_t parameters = 0;
    bool loaded = false; // the model loaded in the lab, not a preset
    // Sliding-window layers (Gemma 3: five of six): they keep only the last slidingWindow
    // tokens of KV, so past the window a token costs only the other layers' bytes.
    std::uint32_t windowedLayers = 0;
    std::uint32_t slidingWindow = 0;
    std::uint32_t globalLayers() const { return layers - windowedLayers; }
};

// Which attention the KV cache is sized for: the model as built, full multi-head attention
// (a KV head per query head), or multi-query attention (one KV head for all).
enum class KvVariant { AsBuilt, MultiHead, MultiQuery };
const char* kvVariantName(KvVariant variant);      // "as built", "MHA", "MQA"
KvVariant parseKvVariant(const std::string& name); // throws std::invalid_argument
// The shape with the variant's KV heads (weights stay as built: only the cache changes).
ModelShape withVariant(ModelShape shape, KvVariant variant);
// "GQA (14 query heads share 2 KV heads)", "MHA", "MQA" for a shape as it is.
std::string attentionKind(const ModelShape& shape);

// A number format for weights or KV elements: fp16 2 bytes, int8 1, int4 half a byte (no
// scales counted: a q4_0 block adds 0.5 bits per weight, said in the tables' notes).
struct BudgetPrecision {
    std::string name;
    double bytesPerElement = 0;
};
const std::vector<BudgetPrecision>& budgetPrecisions();        // fp16, int8, int4
BudgetPrecision parseBudgetPrecision(const std::string& name); // throws std::invalid_argument

// Every layer's KV bytes per token (the bytes a token adds while within every window).
std::uint64_t kvBytesPerToken(const ModelShape& shape, double bytesPerElement);
// KV bytes of one sequence of `tokens` tokens: windowed layers stop at their window.
std::uint64_t kvBytesForTokens(const ModelShape& shape, double bytesPerElement,
                               std::uint64_t tokens);
std::uint64_t weightBytes(const ModelShape& shape, double bytesPerWeight);

// One solved row. freeBytes < 0: the weights alone do not fit.
struct BudgetSolution {
    std::uint64_t deviceBytes = 0;
    std::uint64_t weightBytes = 0;
    std::uint64_t kvBytesPerToken = 0;
    std::int64_t freeBytes = 0;     // device - weights - reserve
    std::int64_t contextTokens = 0; // floor(free / KV per token); negative when it does not fit
    std::int64_t users = 0;         // floor(context tokens / context per user); 0 when none fit
    bool fits() const { return freeBytes >= 0 && contextTokens > 0; }
};
BudgetSolution solveBudget(std::uint64_t deviceBytes, std::uint64_t weightBytes,
                           std::uint64_t kvBytesPerToken, std::uint64_t reserveBytes,
                           std::uint32_t contextPerUser);
// The same for a shape that may have sliding-window layers: context tokens = the longest
// single sequence whose KV fits (windowed layers capped at the window), users = how many
// sequences of contextPerUser tokens fit. Without windowed layers it equals the above.
BudgetSolution solveBudget(std::uint64_t deviceBytes, std::uint64_t weightBytes,
                           const ModelShape& shape, double kvBytesPerElement,
                           std::uint64_t reserveBytes, std::uint32_t contextPerUser);

// The presets shipped in resources/model-presets.json or a user's file of the same form:
// {"presets": [{"name", "layers", "heads", "kv_heads", "head_dim", "parameters"}, ...]},
// and where the model has sliding-window layers "windowed_layers" and "sliding_window".
// A bad file or entry throws std::invalid_argument naming the file, the entry and the field.
std::vector<ModelShape> loadModelPresets(const std::filesystem::path& path);
std::vector<ModelShape> parseModelPresets(const std::string& json, const std::string& source);
// The shipped presets (resources/model-presets.json), or an error saying where it looked.
std::vector<ModelShape> shippedModelPresets();

ModelShape shapeOf(const models::ModelConfig& config, std::uint64_t parameters,
                   const std::string& name);

struct BudgetQuery {
    std::vector<double> deviceGiB = {8, 16, 24, 80};
    // A detected device's memory (its name and bytes), added as one more size.
    std::optional<std::pair<std::string, std::uint64_t>> detectedDevice;
    std::vector<std::string> precisions = {"fp16", "int8", "int4"}; // of the weights
    std::string kvPrecision = "fp16";
    std::uint32_t contextPerUser = 4096;
    KvVariant variant = KvVariant::AsBuilt;
    std::uint64_t reserveBytes = 0; // kept free for the runtime, activations, the display
};

// One table of KV bytes per token for every shape (as built, MHA, MQA), then one budget table
// per device size: a row per shape and weight precision.
std::vector<Table> memoryBudgetTables(const std::vector<ModelShape>& shapes,
                                      const BudgetQuery& query);

} // namespace inferscope::compute::experiments
