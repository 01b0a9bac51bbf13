#pragma once
// DecoderBackend over the Vulkan Engine: one sequence, cached or really uncached, so the
// CLI's `generate --backend vulkan` and the window drive it like the CPU reference.
#include "compute/engine/DecoderBackend.hpp"
#include "compute/engine/Engine.hpp"

#include <memory>

namespace inferscope::compute {

class VulkanBackend : public DecoderBackend, public CachingSwitch {
public:
    explicit VulkanBackend(std::shared_ptr<Engine> engine, SequenceId sequence = 1);
    std::string name() const override;
    void reset() override;
    std::vector<float> append(std::span<const std::int32_t> tokens) override;
    std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) override;
    std::uint32_t vocabSize() const override;
    std::uint32_t length() const override;
    void truncate(std::uint32_t newLength) override;
    std::vector<std::uint64_t> kvUsedBytesByLayer() const override;
    std::optional<models::MacCount> lastAppendMacs() const override { return lastProbes_.macs; }

    Engine* gpuEngine() override { return engine_.get(); }
    const StepProbes* lastStepProbes() const override { return &lastProbes_; }
    CachingSwitch* cachingSwitch() override { return this; }
    void setCached(bool cached) override { engine_->setCached(cached); }
    bool cached() const override { return engine_->cached(); }

    Engine& engine() { return *engine_; }
    // Probe records of the last append (timings, residual max, KV bytes).
    const StepProbes& lastProbes() const { return lastProbes_; }

private:
    std::vector<float> run(std::span<const std::int32_t> tokens, bool allLogits);

    std::shared_ptr<Engine> engine_;
    SequenceId sequence_;
    StepProbes lastProbes_;
};

} // namespace inferscope::compute
