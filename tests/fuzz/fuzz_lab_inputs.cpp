// The JSON a user hands the labs, on arbitrary bytes (the first byte picks which): a request
// mix file (`schedule --mix`, read from a scratch file as the CLI reads it) or a model presets
// file (`budget --presets`, the window's Add presets). Only std::invalid_argument, naming the
// problem, may come out; an accepted file stays within its documented bounds.
#include "FuzzInput.hpp"
#include "compute/experiments/budget/MemoryBudget.hpp"
#include "compute/experiments/serving/RequestMix.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace inferscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool mix = data[0] % 2 == 0;
    try {
        if (mix) {
            const auto file = fuzz::writeScratch("mix.json", data + 1, size - 1);
            const auto entries = compute::experiments::loadRequestMix(file);
            if (entries.empty() || entries.size() > compute::experiments::kMaxMixRequests)
                std::abort();
            for (const auto& entry : entries)
                if (entry.prompt.empty() || entry.outputTokens == 0) std::abort();
        } else {
            const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
            const auto shapes = compute::experiments::parseModelPresets(text, "presets.json");
            if (shapes.empty() || shapes.size() > compute::experiments::kMaxModelPresets)
                std::abort();
        }
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
