#pragma once
// Perplexity (models/reference/Perplexity.hpp) on any decoder backend: each window runs from
// an empty cache, its first half without logits, the scored half in pieces, so no more than
// one piece's logits are held whatever the window.
#include "compute/engine/DecoderBackend.hpp"
#include "models/reference/Perplexity.hpp"

namespace inferscope::compute {

models::PerplexityResult backendPerplexity(DecoderBackend& backend,
                                           std::span<const std::int32_t> tokens,
                                           const models::PerplexityOptions& options);

} // namespace inferscope::compute
