#include "compute/engine/Generation.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

namespace inferscope::compute {

double GenerationResult::decodeTokensPerSecond() const {
    double total = std::accumulate(stepSeconds.begin(), stepSeconds.end(), 0.0);
    return total > 0 ? static_cast<double>(stepSeconds.size()) / total : 0.0;
}

GenerationResult generate(DecoderBackend& backend, const std::vector<std::int32_t>& promptIds,
                          const GenerationOptions& options, const TokenCallback& onToken) {
    if (promptIds.empty()) throw std::invalid_argument("generate: the prompt has no tokens");
    using Clock = std::chrono::steady_clock;
    GenerationResult result;
    result.promptIds = promptIds;
    models::Sampler sampler(options.sampling);
    std::vector<std::int32_t> history = promptIds;
    backend.reset();

    auto start = Clock::now();
    std::vector<float> logits = backend.append(promptIds);
    result.prefillSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    auto recordMacs = [&] {
        if (auto macs = backend.lastAppendMacs()) result.stepMacs.push_back(*macs);
    };
    recordMacs();

    for (std::int32_t i = 0; i < options.maxNewTokens; ++i) {
        if (options.cancel && options.cancel->load()) {
            result.cancelled = true;
            break;
        }
        std::int32_t token = sampler.sample(logits, history);
        result.generatedIds.push_back(token);
        history.push_back(token);
        if (onToken)
            onToken(result.generatedIds.size() - 1, token,
                    i == 0 ? result.prefillSeconds : result.stepSeconds.back());
        if (std::find(options.stopTokens.begin(), options.stopTokens.end(), token) !=
            options.stopTokens.end()) {
            result.stoppedByToken = true;
            break;
        }
        if (i + 1 == options.maxNewTokens) break;
        auto stepStart = Clock::now();
        const std::int32_t next[1] = {token};
        logits = backend.append(next);
        result.stepSeconds.push_back(
            std::chrono::duration<double>(Clock::now() - stepStart).count());
        recordMacs();
    }
    return result;
}

} // namespace inferscope::compute
