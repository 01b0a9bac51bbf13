#include "compute/engine/VulkanBackend.hpp"

namespace inferscope::compute {

VulkanBackend::VulkanBackend(std::shared_ptr<Engine> engine, SequenceId sequence)
    : engine_(std::move(engine)), sequence_(sequence) {}

std::string VulkanBackend::name() const {
    return "vulkan (" + engine_->context().info().name + ", " + engine_->weightFormatLabel() +
           (engine_->cached() ? ", cached)" : ", uncached)");
}

void VulkanBackend::reset() {
    engine_->release(sequence_);
}

std::vector<float> VulkanBackend::run(std::span<const std::int32_t> tokens, bool allLogits) {
    if (tokens.empty()) return {};
    auto result = engine_->step({{sequence_, {tokens.begin(), tokens.end()}}}, allLogits);
    lastProbes_ = std::move(result.probes);
    return std::move(result.sequences.front().logits);
}

std::vector<float> VulkanBackend::append(std::span<const std::int32_t> tokens) {
    return run(tokens, false);
}

std::vector<float> VulkanBackend::appendAllLogits(std::span<const std::int32_t> tokens) {
    return run(tokens, true);
}

std::uint32_t VulkanBackend::vocabSize() const {
    return engine_->config().vocabSize;
}

std::uint32_t VulkanBackend::length() const {
    return engine_->sequenceLength(sequence_);
}

void VulkanBackend::truncate(std::uint32_t newLength) {
    engine_->truncate(sequence_, newLength);
}

std::vector<std::uint64_t> VulkanBackend::kvUsedBytesByLayer() const {
    const auto& cache = engine_->kvCache();
    auto bytes = cache.bytesPerPositionByLayer();
    for (auto& b : bytes) b *= cache.length(sequence_);
    return bytes;
}

} // namespace inferscope::compute
