#include "compute/lab/JobControl.hpp"

namespace inferscope::compute {

void JobControl::throwIfCancelled() const {
    if (cancelled()) throw JobCancelled();
}

std::function<void(const std::string&, int)> JobControl::cancellingProgress() const {
    return [this](const std::string& stage, int percent) {
        report(stage, percent);
        throwIfCancelled();
    };
}

} // namespace inferscope::compute
