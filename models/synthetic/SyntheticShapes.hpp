#pragma once
// Named synthetic models: real models' shapes with random weights (what a model of that size
// costs, without a download) and tiny ones of each architecture (the fixtures that
// scripts/make-architecture-fixtures.py runs through llama.cpp and the suite checks).
#include "models/synthetic/SyntheticModel.hpp"

#include <optional>
#include <string>
#include <vector>

namespace inferscope::models {

struct SyntheticShape {
    std::string name;        // "qwen3-0.6b", "tiny-gemma3", ...
    std::string description; // one line for help texts
};

const std::vector<SyntheticShape>& syntheticShapes();
// The spec of a named shape with weights of `type`; nullopt for an unknown name.
std::optional<SyntheticModelSpec> syntheticShape(const std::string& name, TensorType type);

// Real shapes (random weights, a 4,096-token tokenizer padded to the full vocabulary):
// Qwen3-0.6B (28 layers, hidden 1,024, 16 query and 8 KV heads of 128, FFN 3,072, 151,936
// rows, tied, Q/K norm, RoPE base 1e6) and Gemma-3-270M (18 layers, hidden 640, 4 query heads
// and 1 KV head of 256, FFN 2,048, 262,144 rows, tied, window 512 on five of six layers, RoPE
// bases 1e6 global and 1e4 local).
SyntheticModelSpec qwen3SixHundredMillionShape(TensorType type);
SyntheticModelSpec gemma3TwoHundredSeventyMillionShape(TensorType type);

} // namespace inferscope::models
