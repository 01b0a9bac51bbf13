#include "compute/lab/RunRecords.hpp"

#include <numeric>

namespace inferscope::compute {

double RunRecord::decodeTokensPerSecond() const {
    double total = std::accumulate(stepSeconds.begin(), stepSeconds.end(), 0.0);
    return total > 0 ? static_cast<double>(stepSeconds.size()) / total : 0.0;
}

double RunRecord::prefillTokensPerSecond() const {
    return prefillSeconds > 0 ? static_cast<double>(promptTokens) / prefillSeconds : 0.0;
}

void RunRecord::apply(const RunDelta& delta) {
    const RunRecord& part = delta.part;
    if (delta.first) {
        *this = part;
        return;
    }
    stepSeconds.insert(stepSeconds.end(), part.stepSeconds.begin(), part.stepSeconds.end());
    kvSamples.insert(kvSamples.end(), part.kvSamples.begin(), part.kvSamples.end());
    if (!part.decodeKernels.empty()) decodeKernels = part.decodeKernels;
    addKernelTimes(decodeKernelsTotal, part.decodeKernelsTotal);
    decodeStepGpuMicroseconds.insert(decodeStepGpuMicroseconds.end(),
                                     part.decodeStepGpuMicroseconds.begin(),
                                     part.decodeStepGpuMicroseconds.end());
    generatedTokens = part.generatedTokens;
    if (!part.kvUsedPerLayer.empty()) kvUsedPerLayer = part.kvUsedPerLayer;
    if (!part.kvAllocatedPerLayer.empty()) kvAllocatedPerLayer = part.kvAllocatedPerLayer;
}

double CachingComparison::cachedTotalSeconds() const {
    return std::accumulate(cachedStepSeconds.begin(), cachedStepSeconds.end(),
                           cachedPrefillSeconds);
}

double CachingComparison::uncachedTotalSeconds() const {
    return std::accumulate(uncachedStepSeconds.begin(), uncachedStepSeconds.end(),
                           uncachedPrefillSeconds);
}

} // namespace inferscope::compute
