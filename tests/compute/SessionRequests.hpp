#pragma once
// Backend choices and requests the LabSession tests share: a Vulkan choice for one weight
// format, and a greedy request that runs a fixed number of tokens past any stop token (so two
// runs can be compared token by token).
#include "compute/session/LabSession.hpp"

#include <cstdint>
#include <string>

namespace inferscope::tests {

inline bool vulkanAvailable() {
    for (const auto& option : compute::availableBackends())
        if (option.choice.kind == compute::BackendChoice::Kind::Vulkan) return true;
    return false;
}

inline compute::BackendChoice vulkanChoice(const std::string& format = {}) {
    compute::BackendChoice choice;
    choice.kind = compute::BackendChoice::Kind::Vulkan;
    choice.weightFormat = format;
    return choice;
}

// Greedy, no chat template, no activation recording (a test that wants one turns it on).
inline compute::GenerationRequest greedyRequest(std::int32_t tokens,
                                                const std::string& prompt = "the quick brown fox") {
    compute::GenerationRequest request;
    request.prompt = prompt;
    request.chat = false;
    request.maxNewTokens = tokens;
    request.sampling.greedy = true;
    request.stopAtStopTokens = false;
    request.collectActivations = false;
    request.recordResidualStream = false;
    return request;
}

} // namespace inferscope::tests
