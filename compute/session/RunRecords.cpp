#include "compute/session/RunRecords.hpp"

#include <numeric>

namespace inferscope::compute {

double RunRecord::decodeTokensPerSecond() const {
    double total = std::accumulate(stepSeconds.begin(), stepSeconds.end(), 0.0);
    return total > 0 ? static_cast<double>(stepSeconds.size()) / total : 0.0;
}

double RunRecord::prefillTokensPerSecond() const {
    return prefillSeconds > 0 ? static_cast<double>(promptTokens) / prefillSeconds : 0.0;
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
