#pragma once
// The session's Vulkan engine lent to a lab that runs it in other weight formats (the scheme
// labs, the speculative lab's target), so the lab needs no engine of its own: while lent it
// measures (probes off, prefix caching on); when the lease ends its format, probes and caching
// come back and the session warms it up again (LabContext::engineRepacked).
#include "compute/engine/Engine.hpp"

#include <optional>

namespace inferscope::compute {

class DecoderBackend;
class LabContext;

class SessionEngineLease {
public:
    SessionEngineLease(LabContext& lab, Engine& engine);
    ~SessionEngineLease(); // gives the engine back; errors swallowed (a cancel's is reported)
    SessionEngineLease(const SessionEngineLease&) = delete;
    SessionEngineLease& operator=(const SessionEngineLease&) = delete;

    // The session's backend over its engine re-packed into `format` (head: `headFormat`, or
    // following the format), reset. `kvTokens`: a KV cache of that many positions while lent,
    // in place of the session's (its contents are stale under other weights anyway).
    DecoderBackend& repack(WeightFormat format, std::optional<WeightFormat> headFormat,
                           std::optional<std::uint32_t> kvTokens = {});
    // The session's format, KV cache, probes and caching back; throws if the re-pack fails.
    void giveBack();

private:
    LabContext& lab_;
    Engine& engine_;
    DecoderBackend& session_;
    WeightFormat format_;
    std::optional<WeightFormat> headFormat_;
    ProbeOptions probes_;
    bool cached_;
    std::uint32_t kvTokens_;
    bool repacked_ = false;
};

} // namespace inferscope::compute
