#include "compute/experiments/serve/StopStrings.hpp"

#include <algorithm>

namespace inferscope::compute::experiments {

StopStrings::StopStrings(std::vector<std::string> stops) {
    for (auto& stop : stops)
        if (!stop.empty()) stops_.push_back(std::move(stop));
}

std::string StopStrings::add(const std::string& text) {
    if (stopped_) return {};
    held_ += text;
    // The earliest complete match wins.
    std::size_t match = std::string::npos;
    for (const auto& stop : stops_) match = std::min(match, held_.find(stop));
    if (match != std::string::npos) {
        stopped_ = true;
        std::string out = held_.substr(0, match);
        held_.clear();
        return out;
    }
    // Hold back the longest tail that is the start of some stop string.
    std::size_t keep = 0;
    for (const auto& stop : stops_)
        for (std::size_t n = std::min(stop.size() - 1, held_.size()); n > keep; --n)
            if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
                keep = n;
                break;
            }
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

std::string StopStrings::flush() {
    std::string out;
    if (!stopped_) out.swap(held_);
    return out;
}

} // namespace inferscope::compute::experiments
