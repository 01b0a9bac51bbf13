#include "compute/engine/KernelTime.hpp"

#include "compute/SampleSpread.hpp"

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
    return sampleStandardDeviation(microseconds, squaredStepMicroseconds, steps);
}

} // namespace inferscope::compute
