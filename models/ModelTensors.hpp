#pragma once
// The tensors a configuration calls for, by canonical name and GGUF-order shape: the one list
// both loaders check a file against and the transformers read.
#include "models/ModelConfig.hpp"
#include "models/WeightStore.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace inferscope::models {

// Every tensor `config` needs (output.weight only when withOutput), shapes in GGUF order.
std::map<std::string, std::vector<std::uint64_t>> expectedTensorShapes(const ModelConfig& config,
                                                                       bool withOutput);

// A fused matrix (several matrices' rows stacked: phi3's Q|K|V, its gate|up) replaced in the
// store by views of its row ranges, one canonical tensor per part, in order; nothing is
// copied (whole rows are whole blocks of any type). Throws ModelError, naming the fused
// tensor, when its shape is not cols x the parts' rows.
void splitFusedMatrix(WeightStore& store, const std::string& fusedName,
                      const std::vector<std::pair<std::string, std::uint64_t>>& parts,
                      std::uint64_t cols, const std::string& file);

} // namespace inferscope::models
