#pragma once
// What of a model's architecture the GPU engine cannot run yet, said before anything is built
// (the engine and the load check refuse such a model naming it, instead of computing another
// model).
#include "models/ModelConfig.hpp"

#include <string>

namespace inferscope::compute {

// Empty when the engine runs everything `config` asks for; else the traits it lacks, e.g.
// "Q/K norm (qwen3), sliding-window attention (gemma3)".
std::string engineUnsupportedTraits(const models::ModelConfig& config);

// Throws ComputeError naming the model's architecture and engineUnsupportedTraits().
void requireEngineSupport(const models::ModelConfig& config);

} // namespace inferscope::compute
