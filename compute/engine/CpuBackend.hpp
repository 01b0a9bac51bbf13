#pragma once
// DecoderBackend over the CPU reference transformer, cached or really uncached.
#include "compute/engine/DecoderBackend.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <memory>

namespace inferscope::compute {

class CpuBackend : public DecoderBackend {
public:
    CpuBackend(std::shared_ptr<const models::ReferenceTransformer> model, bool useCache = true);
    std::string name() const override;
    void reset() override;
    std::vector<float> append(std::span<const std::int32_t> tokens) override;
    std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) override;
    std::uint32_t vocabSize() const override;
    std::uint32_t length() const override;
    void truncate(std::uint32_t newLength) override;
    std::vector<std::uint64_t> kvUsedBytesByLayer() const override;

private:
    std::shared_ptr<const models::ReferenceTransformer> model_;
    bool useCache_;
    models::ReferenceTransformer::KvCache cache_;
    std::vector<std::int32_t> sequence_; // the whole sequence, for the uncached mode
};

} // namespace inferscope::compute
