#pragma once
// The generation loop shared by the CLI and the window: prefill the prompt, then decode
// token by token with a Sampler, timing each step, stopping at a stop token or after N.
#include "compute/engine/DecoderBackend.hpp"
#include "models/reference/Sampler.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace inferscope::compute {

struct GenerationOptions {
    std::int32_t maxNewTokens = 32;
    models::SamplingOptions sampling;
    std::vector<std::int32_t> stopTokens; // generation ends after emitting one of these
    const std::atomic<bool>* cancel = nullptr;
};

struct GenerationResult {
    std::vector<std::int32_t> promptIds;
    std::vector<std::int32_t> generatedIds;
    double prefillSeconds = 0;
    std::vector<double>
        stepSeconds; // time of each decode step (the first token comes from prefill)
    // Multiply-accumulates the backend counted: the prefill, then each decode step (empty
    // when the backend does not count them).
    std::vector<models::MacCount> stepMacs;
    bool stoppedByToken = false;
    bool cancelled = false;

    double timeToFirstTokenSeconds() const { return prefillSeconds; }
    double decodeTokensPerSecond() const;
};

// Called after each generated token: its index in generatedIds, its id, and the seconds of
// the append that produced its logits (the prefill for index 0, else decode step index - 1:
// the very figures of GenerationResult, so a streamed record and the final one agree).
using TokenCallback =
    std::function<void(std::size_t index, std::int32_t token, double stepSeconds)>;

GenerationResult generate(DecoderBackend& backend, const std::vector<std::int32_t>& promptIds,
                          const GenerationOptions& options, const TokenCallback& onToken = {});

} // namespace inferscope::compute
