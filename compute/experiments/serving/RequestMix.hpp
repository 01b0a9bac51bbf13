#pragma once
// The request mix of the serving lab (chapter item 7): output lengths skewed like real traffic
// (many short answers, a long tail) with exactly the statistics asked for, or prompts and
// lengths read from a JSON file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct RequestMixSpec {
    std::uint32_t requests = 64;
    std::uint32_t median = 18;
    std::uint32_t longest = 231;
    std::uint32_t total = 1874;
    std::uint64_t seed = 1;
};

// Output lengths, in arrival order, with exactly the spec's count, median (both middle values
// when the count is even), longest and total; skewed (many short, a long tail) and the same
// for the same seed on every platform. Throws std::invalid_argument for fewer than 3 requests
// or statistics no list of positive lengths can have.
std::vector<std::uint32_t> skewedLengths(const RequestMixSpec& spec);

// One line of a mix file: {"requests": [{"prompt": "text", "tokens": 12}, ...]}.
struct MixEntry {
    std::string prompt;
    std::uint32_t outputTokens = 0;
};
// A mix is a few KB; 1 MiB holds thousands of requests.
inline constexpr std::uint64_t kMaxMixFileBytes = 1ull << 20;
// Every request of a mix runs on the engine: as many as `schedule --requests` allows.
inline constexpr std::size_t kMaxMixRequests = 1024;
// Throws std::invalid_argument naming the file and what is wrong (not a regular file,
// unreadable, over kMaxMixFileBytes, not strict JSON, no requests, a request without a prompt
// or with tokens < 1).
std::vector<MixEntry> loadRequestMix(const std::filesystem::path& file);

struct ServingRequest {
    std::vector<std::int32_t> prompt;
    std::uint32_t outputTokens = 0;
};

} // namespace inferscope::compute::experiments
