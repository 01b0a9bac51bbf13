#include "compute/engine/KernelTime.hpp"

#include <algorithm>

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
}

void addKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& step) {
    for (const auto& time : step) addKernelTime(total, time);
}

} // namespace inferscope::compute
