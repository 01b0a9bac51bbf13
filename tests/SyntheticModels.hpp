#pragma once
// The smallest synthetic model the CLI and session tests load: two layers, grouped-query
// attention (4 query heads over 2 KV heads), head dim 16. Small enough to load in
// milliseconds, shaped enough that every per-layer and per-head table has more than one row.
#include "models/synthetic/SyntheticModel.hpp"

#include <string>

namespace inferscope::tests {

inline models::SyntheticModelSpec twoLayerGqaSpec() {
    models::SyntheticModelSpec spec;
    spec.layers = 2;
    spec.heads = 4;
    spec.kvHeads = 2;
    spec.headDim = 16;
    return spec;
}

// Writes twoLayerGqaSpec() as GGUF to `path` and returns the path.
inline std::string writeTwoLayerGqaModel(const std::string& path) {
    models::writeSyntheticGguf(twoLayerGqaSpec(), path);
    return path;
}

} // namespace inferscope::tests
