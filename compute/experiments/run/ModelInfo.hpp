#pragma once
// Chapter items 5 and 14 start here: what the loaded model is, what its weights weigh, and
// what one token of context costs in KV cache (2 x layers x KV heads x head dim x bytes).
#include "compute/Table.hpp"
#include "models/LoadedModel.hpp"

namespace inferscope::compute::experiments {

// Architecture and shape: one row per property.
Table modelInfo(const models::LoadedModel& model);
// Stored bytes and parameter counts by tensor type.
Table weightBytesByType(const models::LoadedModel& model);
// KV cache bytes per token and per 1,000 tokens at fp32/fp16/int8, with the formula's terms.
Table kvCacheBytes(const models::ModelConfig& config);

} // namespace inferscope::compute::experiments
