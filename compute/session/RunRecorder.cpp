#include "compute/session/RunRecorder.hpp"

#include "compute/experiments/quantization/ActivationReport.hpp"

#include <numeric>

namespace inferscope::compute {

namespace {
std::uint64_t sum(const std::vector<std::uint64_t>& values) {
    return std::accumulate(values.begin(), values.end(), std::uint64_t{0});
}
} // namespace

RunRecorder::RunRecorder(RunRecord facts) : record_(std::move(facts)) {}

KvSample RunRecorder::sample(std::int64_t tokens, const StepProbes* probes,
                             const DecoderBackend& backend, std::uint32_t usedBlocks) {
    // KV bytes per layer as the backend counts them now (after the append that made this token).
    if (probes) {
        record_.kvUsedPerLayer = probes->kvUsedBytesByLayer;
        record_.kvAllocatedPerLayer = probes->kvAllocatedBytesByLayer;
    } else {
        record_.kvUsedPerLayer = backend.kvUsedBytesByLayer();
        record_.kvAllocatedPerLayer.clear();
    }
    pending_.part.kvUsedPerLayer = record_.kvUsedPerLayer;
    pending_.part.kvAllocatedPerLayer = record_.kvAllocatedPerLayer;
    return KvSample{tokens, sum(record_.kvUsedPerLayer), sum(record_.kvAllocatedPerLayer),
                    usedBlocks};
}

void RunRecorder::tokenArrived(std::size_t index, double seconds, const StepProbes* probes,
                               const DecoderBackend& backend, std::uint32_t usedBlocks) {
    auto& part = pending_.part;
    if (index == 0) {
        record_.prefillSeconds = seconds;
        if (probes) record_.prefillKernels = probes->kernels;
    } else {
        record_.stepSeconds.push_back(seconds);
        part.stepSeconds.push_back(seconds);
        if (probes) {
            record_.decodeKernels = probes->kernels;
            addStepKernelTimes(record_.decodeKernelsTotal, probes->kernels);
            part.decodeKernels = probes->kernels;
            addStepKernelTimes(part.decodeKernelsTotal, probes->kernels);
            double gpu = 0;
            for (const auto& kernel : probes->kernels) gpu += kernel.microseconds;
            record_.decodeStepGpuMicroseconds.push_back(gpu);
            part.decodeStepGpuMicroseconds.push_back(gpu);
        }
    }
    // The backend holds the prompt and the tokens before this one.
    const auto kv = sample(record_.promptTokens + std::int64_t(index), probes, backend, usedBlocks);
    record_.kvSamples.push_back(kv);
    part.kvSamples.push_back(kv);
    record_.generatedTokens = std::int64_t(index) + 1;
    part.generatedTokens = record_.generatedTokens;
}

void RunRecorder::finalSample(std::int64_t tokens, const DecoderBackend& backend) {
    const auto kv = sample(tokens, nullptr, backend, 0);
    // A repeat of the last sample's position replaces nothing: samples stay one per position.
    if (!record_.kvSamples.empty() && record_.kvSamples.back().tokens == tokens) return;
    record_.kvSamples.push_back(kv);
}

RunDeltaPtr RunRecorder::takeDelta() {
    auto delta = std::make_shared<RunDelta>();
    if (!sentFirst_) {
        // The facts and everything so far: applied to an empty record it gives this one.
        delta->first = true;
        delta->part = record_;
        sentFirst_ = true;
    } else {
        delta->part = std::move(pending_.part);
    }
    pending_ = RunDelta{};
    return delta;
}

std::shared_ptr<const ResidualRecording> residualRecording(const StepProbes& probes,
                                                           const models::ModelConfig& config,
                                                           std::size_t promptTokens) {
    if (probes.residualStreamRows == 0 || probes.residualStreamRows != promptTokens ||
        probes.residualStream.size() !=
            std::size_t(config.layers) * probes.residualStreamRows * config.hiddenSize)
        return nullptr;
    auto recording = std::make_shared<ResidualRecording>();
    recording->layers = config.layers;
    recording->positions = probes.residualStreamRows;
    recording->hidden = config.hiddenSize;
    recording->values = probes.residualStream; // the same [layer][position][dimension] order
    return recording;
}

ActivationRecordPtr activationRecord(std::vector<std::vector<float>> maxAbs, std::int64_t positions,
                                     std::shared_ptr<const ResidualRecording> recording) {
    auto record = std::make_shared<ActivationRecord>();
    record->maxAbsPerLayer = std::move(maxAbs);
    record->positions = positions;
    record->recording = std::move(recording);
    record->panelTables =
        std::make_shared<const ActivationPanelTables>(experiments::activationPanelTables(
            record->maxAbsPerLayer, std::uint32_t(positions), record->recording.get()));
    return record;
}

} // namespace inferscope::compute
