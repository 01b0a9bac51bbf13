#pragma once
// One model, ready to run: configuration, host weights (mapped), tokenizer data.
#include "models/ModelConfig.hpp"
#include "models/WeightStore.hpp"
#include "models/tokenizer/TokenizerData.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace inferscope::models {

enum class ModelFormat { Gguf, Safetensors };

struct LoadedModel {
    std::filesystem::path path;
    ModelFormat format = ModelFormat::Gguf;
    ModelConfig config;
    WeightStore weights;
    TokenizerData tokenizer;
    std::uint64_t fileBytes = 0; // all files that make up the model
};

// A GGUF file, or a folder with config.json, tokenizer.json and model.safetensors (or
// model.safetensors.index.json and its shards). Throws ModelError with a clear message.
LoadedModel loadModel(const std::filesystem::path& path);
LoadedModel loadGgufModel(const std::filesystem::path& file);
LoadedModel loadSafetensorsModel(const std::filesystem::path& folder);

// Where set-up puts data: $INFERSCOPE_CACHE, else $XDG_CACHE_HOME/inferscope, else
// ~/.cache/inferscope.
std::filesystem::path cacheDirectory();
// "default" -> the SmolLM2-135M-Instruct GGUF in the cache; anything else is a path.
std::filesystem::path resolveModelPath(const std::string& argument);
// The perplexity corpus placed by set-up (the Book of Ruth, KJV).
std::filesystem::path defaultCorpusPath();

} // namespace inferscope::models
