#pragma once
// One completion as the serving loop sees it: the prompt as token ids, how to sample, when to
// stop, and the callback that receives what each engine step makes for it. The HTTP layer
// (OpenAiServer) builds these from a request body; tests build them directly.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

enum class FinishReason { None, Stop, Length, Cancelled, Error };
// "stop", "length", "cancelled", "error" (OpenAI's finish_reason for the first two).
std::string finishReasonName(FinishReason reason);

struct CompletionUsage {
    std::uint32_t promptTokens = 0;
    std::uint32_t completionTokens = 0;
    std::uint32_t sharedPromptTokens = 0; // prompt positions forked from another sequence
};

// What one step made for a request, handed to its callback on the loop's thread (keep it
// short: the next step waits). `text` holds complete UTF-8 characters that no stop string
// can still claim; the last event has `finish` set and carries the usage.
struct CompletionEvent {
    std::vector<std::int32_t> tokens; // the tokens this step sampled (0 or 1)
    std::string text;
    FinishReason finish = FinishReason::None;
    std::string error; // with FinishReason::Error
    CompletionUsage usage;
};
using CompletionCallback = std::function<void(const CompletionEvent&)>;

struct CompletionRequest {
    std::vector<std::int32_t> prompt;
    std::uint32_t maxTokens = 16;
    float temperature = 0.0f; // 0: greedy
    float topP = 1.0f;        // >= 1: off
    std::optional<std::uint64_t> seed;
    std::vector<std::string> stop; // stop strings (not part of the text handed on)
    bool ignoreEos = false;
    CompletionCallback onEvent;
};

} // namespace inferscope::compute::experiments
