#pragma once
// The backends the quantization labs (quality report, soft labels) run each scheme's weights
// on: every scheme quantized, then dequantized to f32, on f32 kernels, so the generation format
// of the session never re-quantizes them. On a session with a Vulkan engine they run as F32
// engines on its device; otherwise on the CPU reference.
#include "compute/engine/DecoderBackend.hpp"
#include "compute/lab/LabContext.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <functional>
#include <memory>

namespace inferscope::compute {

// Builds the backend that runs one set of f32 weights.
using WeightsBackendFactory =
    std::function<std::unique_ptr<DecoderBackend>(models::ReferenceWeights weights)>;

WeightsBackendFactory schemeBackendFactory(LabContext& lab);

} // namespace inferscope::compute
