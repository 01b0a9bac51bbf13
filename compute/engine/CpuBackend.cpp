#include "compute/engine/CpuBackend.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace inferscope::compute {

CpuBackend::CpuBackend(std::shared_ptr<const models::ReferenceTransformer> model, bool useCache)
    : model_(std::move(model)), useCache_(useCache), cache_(model_->newCache()) {}

std::string CpuBackend::name() const {
    return useCache_ ? "cpu" : "cpu (uncached)";
}

void CpuBackend::reset() {
    cache_ = model_->newCache();
    sequence_.clear();
}

std::vector<float> CpuBackend::append(std::span<const std::int32_t> tokens) {
    sequence_.insert(sequence_.end(), tokens.begin(), tokens.end());
    if (!useCache_) return model_->forwardUncached(sequence_);
    return model_->forward(tokens, cache_, false);
}

std::vector<float> CpuBackend::appendAllLogits(std::span<const std::int32_t> tokens) {
    sequence_.insert(sequence_.end(), tokens.begin(), tokens.end());
    if (!useCache_) {
        // Uncached means every position is recomputed from scratch, one prefix at a time.
        std::vector<float> all;
        std::size_t start = sequence_.size() - tokens.size();
        for (std::size_t end = start + 1; end <= sequence_.size(); ++end) {
            auto logits = model_->forwardUncached(std::span(sequence_).first(end));
            all.insert(all.end(), logits.begin(), logits.end());
        }
        return all;
    }
    return model_->forward(tokens, cache_, true);
}

std::uint32_t CpuBackend::vocabSize() const {
    return model_->config().vocabSize;
}

std::uint32_t CpuBackend::length() const {
    return std::uint32_t(sequence_.size());
}

void CpuBackend::truncate(std::uint32_t newLength) {
    if (newLength > sequence_.size())
        throw std::out_of_range("cannot cut a sequence of " + std::to_string(sequence_.size()) +
                                " positions to " + std::to_string(newLength));
    sequence_.resize(newLength);
    if (!useCache_) return; // the uncached mode keeps no K and V between calls
    const auto& c = model_->config();
    const std::size_t rowFloats = std::size_t(c.kvHeads) * c.headDim;
    for (auto& k : cache_.k) k.resize(std::min(k.size(), newLength * rowFloats));
    for (auto& v : cache_.v) v.resize(std::min(v.size(), newLength * rowFloats));
    cache_.length = std::min(cache_.length, newLength);
}

std::vector<std::uint64_t> CpuBackend::kvUsedBytesByLayer() const {
    // The fp32 K and V rows held per layer (the uncached mode keeps none between calls).
    std::vector<std::uint64_t> bytes(std::max(cache_.k.size(), cache_.v.size()), 0);
    for (std::size_t l = 0; l < cache_.k.size(); ++l)
        bytes[l] += cache_.k[l].size() * sizeof(float);
    for (std::size_t l = 0; l < cache_.v.size(); ++l)
        bytes[l] += cache_.v[l].size() * sizeof(float);
    return bytes;
}

} // namespace inferscope::compute
