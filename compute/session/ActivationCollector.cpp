#include "compute/session/ActivationCollector.hpp"

#include <algorithm>
#include <cmath>

namespace inferscope::compute {

void ActivationCollector::begin(std::uint32_t layers, std::uint32_t hiddenSize) {
    maxAbs_.assign(layers, std::vector<float>(hiddenSize, 0.0f));
    values_.assign(layers, {});
    positions_ = 0;
    hidden_ = hiddenSize;
    enabled_ = true;
}

void ActivationCollector::observe(std::uint32_t layer, std::uint32_t position,
                                  std::span<const float> row) {
    if (!enabled_ || layer >= maxAbs_.size()) return;
    auto& max = maxAbs_[layer];
    for (std::size_t i = 0; i < std::min(max.size(), row.size()); ++i)
        max[i] = std::max(max[i], std::fabs(row[i]));
    positions_ = std::max(positions_, position + 1);
    auto& layerValues = values_[layer];
    if (layerValues.size() <= position) layerValues.resize(position + 1);
    layerValues[position].assign(row.begin(), row.end());
    layerValues[position].resize(hidden_, 0.0f);
}

std::shared_ptr<const ResidualRecording> ActivationCollector::recording() const {
    if (maxAbs_.empty() || positions_ == 0) return nullptr;
    auto r = std::make_shared<ResidualRecording>();
    r->layers = std::uint32_t(maxAbs_.size());
    r->positions = positions_;
    r->hidden = hidden_;
    r->values.reserve(std::size_t(r->layers) * positions_ * hidden_);
    for (const auto& layer : values_) {
        if (layer.size() != positions_) return nullptr;
        for (const auto& row : layer) r->values.insert(r->values.end(), row.begin(), row.end());
    }
    return r;
}

} // namespace inferscope::compute
