#pragma once
// Builds one generation's RunRecord as its tokens arrive, with the times the generation loop
// measured (one clock for the streamed and the final figures), and cuts the deltas a streaming
// run sends: what changed since the last one, never a copy of the whole run. Also the
// prompt's activation records a run announces.
#include "compute/engine/DecoderBackend.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/lab/RunRecords.hpp"

#include <cstdint>
#include <vector>

namespace inferscope::compute {

class RunRecorder {
public:
    // facts: the run's backend, prompt, model and cache geometry (RunDelta's first part).
    explicit RunRecorder(RunRecord facts);

    // The token at `index` arrived after an append of `seconds` (the prefill for index 0);
    // probes: that append's records (Vulkan), or null. The KV sample is taken from the probes
    // or, without them, from the backend's own count.
    void tokenArrived(std::size_t index, double seconds, const StepProbes* probes,
                      const DecoderBackend& backend, std::uint32_t usedBlocks);
    // A last KV sample once the loop ended (the CPU reference's cache after its last append).
    void finalSample(std::int64_t tokens, const DecoderBackend& backend);

    const RunRecord& record() const { return record_; }
    RunRecord& record() { return record_; }
    // What changed since the last delta (the first one carries the facts and the prefill).
    RunDeltaPtr takeDelta();

private:
    KvSample sample(std::int64_t tokens, const StepProbes* probes, const DecoderBackend& backend,
                    std::uint32_t usedBlocks);

    RunRecord record_;
    RunDelta pending_;
    bool sentFirst_ = false;
};

// The prompt's residual stream as the Vulkan prefill copied it (ProbeOptions::residualStream),
// or null when the step did not hold exactly the prompt's positions.
std::shared_ptr<const ResidualRecording> residualRecording(const StepProbes& probes,
                                                           const models::ModelConfig& config,
                                                           std::size_t promptTokens);
// An activation record with what the panels show computed here, on the job's thread.
ActivationRecordPtr activationRecord(std::vector<std::vector<float>> maxAbs, std::int64_t positions,
                                     std::shared_ptr<const ResidualRecording> recording);

} // namespace inferscope::compute
