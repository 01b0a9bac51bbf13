#pragma once
// Immutable result records: what the worker hands the panels. A record never changes after
// it is made, so it can cross threads as a shared_ptr<const ...> and a panel can keep it.
#include "compute/Table.hpp"
#include "models/ModelConfig.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace inferscope::widgets {

// What the model card shows about one loaded model.
struct ModelRecord {
    std::string path;
    models::ModelConfig config;
    compute::Table info;        // experiments::modelInfo
    compute::Table weightBytes; // experiments::weightBytesByType
    compute::Table kvCache;     // experiments::kvCacheBytes
};

// The KV cache as the backend counted it once the sequence held `tokens` positions.
struct KvSample {
    std::int64_t tokens = 0;
    std::uint64_t bytes = 0;
};

// One generation, complete or so far (a streaming run sends growing copies).
struct RunRecord {
    std::string backend;
    std::int64_t promptTokens = 0;
    std::int64_t generatedTokens = 0;
    double prefillSeconds = 0;       // time to first token
    std::vector<double> stepSeconds; // decode step i produced generated token i + 1
    std::vector<KvSample> kvSamples; // after prefill and after each decode step
    models::ModelConfig config;      // for the KV formula
    bool finished = false;
    bool cancelled = false;

    double decodeTokensPerSecond() const;
    double prefillTokensPerSecond() const;
};

// Per layer, per residual dimension: the largest |h| seen over the run's positions.
struct ActivationRecord {
    std::vector<std::vector<float>> maxAbsPerLayer;
    std::int64_t positions = 0;
};

using ModelRecordPtr = std::shared_ptr<const ModelRecord>;
using RunRecordPtr = std::shared_ptr<const RunRecord>;
using ActivationRecordPtr = std::shared_ptr<const ActivationRecord>;

} // namespace inferscope::widgets
