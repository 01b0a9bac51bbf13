#pragma once
// What a generation loop needs from a transformer, whichever runs it: feed tokens of one
// sequence, get the next-token logits. The CPU reference and the Vulkan Engine both
// implement it, so the CLI and the window drive them with the same code.
#include "models/reference/OperationCounts.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute {

class Engine;
struct StepProbes;

// A backend that can turn its KV cache off and on (the cached vs uncached comparison).
class CachingSwitch {
public:
    virtual ~CachingSwitch() = default;
    virtual void setCached(bool cached) = 0;
    virtual bool cached() const = 0;
};

class DecoderBackend {
public:
    virtual ~DecoderBackend() = default;
    virtual std::string name() const = 0;
    // Forget the sequence (empty the cache).
    virtual void reset() = 0;
    // Appends tokens to the sequence; returns the logits after its last token.
    virtual std::vector<float> append(std::span<const std::int32_t> tokens) = 0;
    // Logits after every one of the appended tokens (rows of vocab size), for perplexity
    // and teacher forcing.
    virtual std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) = 0;
    virtual std::uint32_t vocabSize() const = 0;
    // Positions of the sequence so far (what the next append continues).
    virtual std::uint32_t length() const = 0;
    // Forgets the positions from newLength on and keeps the ones before cached (speculative
    // decoding rolls back the draft tokens the target rejected). Throws std::out_of_range
    // past the end.
    virtual void truncate(std::uint32_t newLength) = 0;
    // Bytes the backend holds for the sequence's keys and values right now, per layer, as it
    // counts them (empty: the backend does not report it). The KV cache panel sets these
    // beside the formula.
    virtual std::vector<std::uint64_t> kvUsedBytesByLayer() const { return {}; }
    // Multiply-accumulates of the last append as the backend counted them (nullopt: it does
    // not count).
    virtual std::optional<models::MacCount> lastAppendMacs() const { return std::nullopt; }
    // Named capabilities, nullptr where the backend has none: the Vulkan engine behind it (the
    // labs that batch many sequences or build engines on its device), the probe records of
    // its last append (kernel times, residual max |h|, KV bytes), and a cache switch.
    virtual Engine* gpuEngine() { return nullptr; }
    virtual const StepProbes* lastStepProbes() const { return nullptr; }
    virtual CachingSwitch* cachingSwitch() { return nullptr; }
    std::uint64_t kvUsedBytes() const {
        std::uint64_t total = 0;
        for (auto bytes : kvUsedBytesByLayer()) total += bytes;
        return total;
    }
};

} // namespace inferscope::compute
