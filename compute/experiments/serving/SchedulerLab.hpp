#pragma once
// Chapter item 7 as a lab: static vs continuous batching over a skewed request mix, both run
// on the session's Vulkan engine and simulated from its measured step costs (Scheduler), the
// paged KV block map of the continuous run (KvBlockMap), and prefix sharing with and without
// forking the system prompt's blocks (PrefixSharing).
#include "compute/experiments/serving/RequestMix.hpp"
#include "compute/experiments/serving/Scheduler.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct SchedulingRequest {
    std::uint32_t slotCount = 8;
    RequestMixSpec mix;                           // generated unless mixFile is given
    std::optional<std::filesystem::path> mixFile; // {"requests": [{"prompt", "tokens"}]}
    std::uint32_t promptTokens = 8;               // of each generated request
    std::uint32_t verifyRequests = 3;
    std::uint32_t simulateRequests = 0; // > 0: also simulate a mix this large
    std::uint32_t simulateSlots = 0;
    std::uint32_t chunkTokens = 64; // prompt tokens per step of the chunked-prefill simulation
    // Prefix sharing: this many requests with one system prompt (kPrefixSystemPrompt), run
    // with and without forkSequence; 0 leaves it out.
    std::uint32_t prefixRequests = 8;
    std::uint32_t prefixOutputTokens = 16;
    // The timeline of the steps run so far, on the job's thread, as the runs go (a window
    // draws it before the result; SchedulerOptions::onTimeline).
    std::function<void(const Table& timeline)> onTimeline;
};

// The prefix-sharing demo's teaching text: one system prompt, then a question per request.
extern const char* const kPrefixSystemPrompt;
std::span<const char* const> prefixQuestions();

struct SchedulerLab {
    static constexpr std::string_view id = "scheduler";
    using Request = SchedulingRequest;
    using Result = std::vector<Table>; // schedulerTables, the KV block map included
    // Throws std::invalid_argument on the CPU reference, for no slots, or a mix that does not
    // fit the context.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) { return result; }
};

// The requests of a scheduling run: the mix file's prompts tokenized, or generated ones.
std::vector<ServingRequest> servingRequests(const LabContext& lab,
                                            const SchedulingRequest& request);

} // namespace inferscope::compute::experiments
