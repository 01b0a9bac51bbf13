#include "compute/engine/BackendPerplexity.hpp"

namespace inferscope::compute {

models::PerplexityResult backendPerplexity(DecoderBackend& backend,
                                           std::span<const std::int32_t> tokens,
                                           const models::PerplexityOptions& options) {
    const models::WindowPieces pieces = [&](std::span<const std::int32_t> piece, bool restart,
                                            bool wantLogits) -> std::vector<float> {
        if (restart) backend.reset();
        if (!wantLogits) {
            backend.append(piece);
            return {};
        }
        return backend.appendAllLogits(piece);
    };
    return models::computePerplexity(tokens, backend.vocabSize(), options, pieces);
}

} // namespace inferscope::compute
