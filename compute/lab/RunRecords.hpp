#pragma once
// Immutable result records: what a lab job hands its caller (the window's panels, the
// CLI's tables). A record never changes after it is made, so it can cross threads as a
// shared_ptr<const ...> and a panel can keep it.
#include "compute/Table.hpp"
#include "compute/engine/KernelTime.hpp"
#include "compute/lab/ActivationRecording.hpp"
#include "models/ModelConfig.hpp"
#include "models/reference/OperationCounts.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute {

// What the model card shows about one loaded model.
struct ModelRecord {
    std::string path;
    models::ModelConfig config;
    std::uint64_t parameters = 0; // every weight in the file (the memory budget's row)
    Table info;                   // experiments::modelInfo
    Table weightBytes;            // experiments::weightBytesByType
    Table kvCache;                // experiments::kvCacheBytes
    Table footprint;              // loadFootprintTable of the backend it loaded on (empty: none)
};

// The KV cache as the backend counted it once the sequence held `tokens` positions.
struct KvSample {
    std::int64_t tokens = 0;
    std::uint64_t bytes = 0;          // positions written (used), all layers (kvUsedBytes)
    std::uint64_t allocatedBytes = 0; // whole blocks handed out, all layers (0: not paged)
    std::uint32_t usedBlocks = 0;     // blocks in use (paged caches only)
};

struct RunDelta;

// One generation, complete or so far (a streaming run sends RunDeltas, its final record whole).
struct RunRecord {
    std::string backend;
    std::int64_t promptTokens = 0;
    std::int64_t generatedTokens = 0;
    double prefillSeconds = 0;       // time to first token
    std::vector<double> stepSeconds; // decode step i produced generated token i + 1
    std::vector<KvSample> kvSamples; // after prefill and after each decode step
    models::ModelConfig config;      // for the KV formula
    std::uint32_t kvBlockSize = 0;   // positions per KV block (0: the cache is not paged)
    std::uint32_t kvCapacityBlocks = 0;
    // Per layer at the last sample, from the cache's own per-layer accounting: bytes written
    // and bytes allocated (whole blocks; empty when the cache is not paged).
    std::vector<std::uint64_t> kvUsedPerLayer, kvAllocatedPerLayer;
    // Per-kernel GPU time of the prefill and of the last decode step (profiling on only), and
    // summed over every decode step.
    std::vector<KernelTime> prefillKernels, decodeKernels, decodeKernelsTotal;
    // Each profiled decode step's GPU time, all kernels together (its spread over the run).
    std::vector<double> decodeStepGpuMicroseconds;
    // For the kernel panel's bandwidth figure (0: not known for this run): the weight bytes
    // the matrix kernels read in one decode step, and the device's measured read bandwidth.
    std::uint64_t decodeWeightBytes = 0;
    double readBytesPerSecond = 0;
    // The final record only: the tokens in and out, and the text generated.
    std::vector<std::int32_t> promptIds, generatedIds;
    std::string text;
    // The backend was warmed (a tiny untimed prefill + decode) since the last load or format
    // switch, so the first-token time holds no one-off pipeline cost.
    bool warm = false;
    bool finished = false;
    bool cancelled = false;

    double decodeTokensPerSecond() const;
    double prefillTokensPerSecond() const;
    // Adds what a streaming run sent since its last delta (the first delta sets the facts).
    void apply(const RunDelta& delta);
};

// What a streaming generation sends while it runs: what changed since its last delta, not a
// copy of the run. The first delta of a run carries its fixed facts (backend, prompt, model,
// cache geometry, the prefill); every delta the decode steps and KV samples made since the one
// before, the latest step's kernel times and their sum over those steps, and the counts as of
// now. RunRecord::apply adds a delta to a record; applied in order, the deltas of a run give
// the same step times and samples as its final record (one clock measures both).
struct RunDelta {
    bool first = false;
    RunRecord part;
};

// Per layer, per residual dimension: the largest |h| seen over the run's positions.
struct ActivationRecord {
    std::vector<std::vector<float>> maxAbsPerLayer;
    std::int64_t positions = 0;
    // Every value of the residual stream over the prompt (for the level counts), when the
    // backend could record it; null otherwise.
    std::shared_ptr<const ResidualRecording> recording;
    // The panels' tables, computed with the record on the job's thread; null: not computed
    // (a panel then computes them itself).
    std::shared_ptr<const ActivationPanelTables> panelTables;
};

// Device memory a run needed at its peak beyond the resident weights (chapter item 3), from
// the engine's accounting (compute::EngineMemory).
struct PeakMemory {
    std::uint64_t weightBytes = 0;
    std::uint64_t kvBytes = 0;        // KV blocks handed out at the fullest step
    std::uint32_t activationRows = 0; // rows of the largest chunk the engine ran
    std::uint64_t activationBytesPerRow = 0;
    std::uint64_t reservedWithoutWeights = 0; // what the engine allocated up front, weights aside
    std::uint64_t activationBytes() const { return activationRows * activationBytesPerRow; }
    std::uint64_t inUseWithoutWeights() const { return kvBytes + activationBytes(); }
};

// The same prompt and token budget run twice with greedy decoding: cached, then uncached.
struct CachingComparison {
    std::string backend;
    std::int64_t promptTokens = 0;
    double cachedPrefillSeconds = 0, uncachedPrefillSeconds = 0;
    std::vector<double> cachedStepSeconds, uncachedStepSeconds;
    std::vector<std::int32_t> cachedTokens, uncachedTokens;
    // The engine's multiply-accumulate counter: the prefill, then each decode step (empty
    // when the backend does not count).
    std::vector<models::MacCount> cachedStepMacs, uncachedStepMacs;
    // Peak memory of each run (Vulkan engine only).
    std::optional<PeakMemory> cachedPeak, uncachedPeak;
    bool cancelled = false;

    double cachedTotalSeconds() const;
    double uncachedTotalSeconds() const;
    bool identicalTokens() const { return cachedTokens == uncachedTokens; }
};

using ModelRecordPtr = std::shared_ptr<const ModelRecord>;
using RunRecordPtr = std::shared_ptr<const RunRecord>;
using RunDeltaPtr = std::shared_ptr<const RunDelta>;
using ActivationRecordPtr = std::shared_ptr<const ActivationRecord>;
using CachingComparisonPtr = std::shared_ptr<const CachingComparison>;

} // namespace inferscope::compute
