#include "compute/engine/KernelTime.hpp"

#include <algorithm>
#include <cmath>

namespace inferscope::compute {

void addKernelTime(std::vector<KernelTime>& total, const KernelTime& time) {
    auto found = std::find_if(total.begin(), total.end(),
                              [&](const KernelTime& k) { return k.kernel == time.kernel; });
    if (found == total.end()) {
        total.push_back(time);
        return;
    }
    found->dispatches += time.dispatches;
    found->microseconds += time.microseconds;
    found->steps += time.steps;
    found->squaredStepMicroseconds += time.squaredStepMicroseconds;
}

void addKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& times) {
    for (const auto& time : times) addKernelTime(total, time);
}

void addStepKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& step) {
    for (auto time : step) {
        time.steps = 1;
        time.squaredStepMicroseconds = time.microseconds * time.microseconds;
        addKernelTime(total, time);
    }
}

double KernelTime::stepStandardDeviation() const {
    if (steps < 2) return 0.0;
    const double n = double(steps), mean = microseconds / n;
    const double variance = (squaredStepMicroseconds - n * mean * mean) / (n - 1);
    return std::sqrt(std::max(variance, 0.0)); // rounding can leave a tiny negative
}

} // namespace inferscope::compute
