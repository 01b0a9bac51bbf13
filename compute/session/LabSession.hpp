#pragma once
// One lab session, below Qt: the loaded model, its tokenizer and chat format, the backend that
// runs it (the Vulkan Engine in a weight format on a device, or the CPU reference) and every
// lab job over them. The window (through widgets/LabJobs on a worker thread) and inferscope-cli
// drive the same session, so a chapter figure is computed one way only.
//
// Each job takes a JobControl (progress callback, cancel flag) and returns plain records
// (compute/session/RunRecords.hpp, Tables). A new experiment (batching, speculative decoding) is
// one more job here over the same model and backend.
#include "compute/Table.hpp"
#include "compute/engine/Backends.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/experiments/AttentionHeadCost.hpp"
#include "compute/experiments/QualityReport.hpp"
#include "compute/experiments/RequestMix.hpp"
#include "compute/experiments/SoftLabels.hpp"
#include "compute/experiments/SpeculativeDecoding.hpp"
#include "compute/session/ActivationCollector.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "compute/session/RunRecords.hpp"
#include "models/LoadedModel.hpp"
#include "models/quant/WeightQuantizer.hpp"
#include "models/reference/Sampler.hpp"
#include "models/tokenizer/ChatTemplate.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::compute {

// What a job is told (stop) and tells (how far it is).
struct JobControl {
    const std::atomic<bool>* cancel = nullptr;
    // stage: one line for a status bar; percent 0-100, or -1 when unknown.
    std::function<void(const std::string& stage, int percent)> progress;

    bool cancelled() const { return cancel && cancel->load(); }
    void report(const std::string& stage, int percent = -1) const {
        if (progress) progress(stage, percent);
    }
    // A progress callback for an experiment: reports, then throws JobCancelled once
    // cancelled (it refers to this JobControl, which must outlive it).
    std::function<void(const std::string&, int)> cancellingProgress() const;
};

// Thrown by a job that stopped because its JobControl was cancelled (reports; a generation
// returns its record marked cancelled instead).
struct JobCancelled : std::runtime_error {
    JobCancelled() : std::runtime_error("cancelled") {}
};

struct GenerationRequest {
    std::string prompt;
    // When set: the prompt as token ids, used as they are (no template, no tokenizer), e.g. a
    // prompt of exactly P tokens for an operation count.
    std::vector<std::int32_t> promptTokenIds;
    bool chat = true; // wrap the prompt in the model's chat template
    std::string systemPrompt;
    std::int32_t maxNewTokens = 64;
    models::SamplingOptions sampling;
    bool stopAtStopTokens = true;     // false: exactly maxNewTokens tokens
    bool collectActivations = true;   // per-dimension max |h| per layer over the prompt
    bool recordResidualStream = true; // the whole stream for the level counts (from the run)
    bool kernelTimings = false;       // GPU timestamps per kernel (Vulkan; serializes the work)
};

// What a generation reports while it runs (each optional; called on the job's thread).
struct GenerationEvents {
    std::function<void(std::int64_t promptTokens)> started;
    std::function<void(const std::string& text)> text; // new complete UTF-8 characters
    std::function<void(RunRecordPtr run)> run;         // growing copies, at most every 40 ms
    std::function<void(ActivationRecordPtr record)> activations;
};

// The quantization lab's quality report (chapter item 11). Every scheme runs from its own
// weights (quantized, then dequantized to f32) on f32 kernels: the generation format of the
// session never enters it.
struct QualityRequest {
    std::vector<models::QuantSchemeSpec> schemes; // empty: the standard list
    std::optional<std::filesystem::path> text;    // perplexity text; empty: the corpus
    std::int64_t perplexityTokens = 256;          // 0: no perplexity
    std::uint32_t context = 512;                  // window (experiments::perplexityContext)
    std::optional<std::filesystem::path> battery; // empty: resources/factual-battery.json
    std::int32_t batteryQuestions = -1;           // -1: all; 0: no battery and no agreement
    std::int32_t agreementTokens = -1;            // -1: 12 per question
    bool requireText = false; // true: a missing text is an error (else perplexity is skipped)
    bool requireBattery = false;
};

// Chapter item 13: the next-token distribution after a prompt, and each scheme's distance
// from it (the reference and the schemes on the same f32 kernels, like the quality report).
struct SoftLabelRequest {
    std::string prompt = "She poured the milk into the";
    bool chat = false;
    std::vector<models::QuantSchemeSpec> schemes; // empty: no divergence table
};

// Chapter item 6: the batched decode sweep (experiments/BatchingSweep) on the session's engine.
struct BatchingRequest {
    std::vector<std::uint32_t> batches = {1, 2, 4, 8, 16, 32, 64};
    std::uint32_t context = 64;
    std::uint32_t steps = 8;
    std::uint32_t exactnessSequences = 3;
};

// Chapter item 7: static vs continuous batching (experiments/Scheduler) on the session's engine.
struct SchedulingRequest {
    std::uint32_t slotCount = 8;
    experiments::RequestMixSpec mix;              // generated unless mixFile is given
    std::optional<std::filesystem::path> mixFile; // {"requests": [{"prompt", "tokens"}]}
    std::uint32_t promptTokens = 8;               // of each generated request
    std::uint32_t verifyRequests = 3;
    std::uint32_t simulateRequests = 0; // > 0: also simulate a mix this large
    std::uint32_t simulateSlots = 0;
    std::uint32_t chunkTokens = 64; // prompt tokens per step of the chunked-prefill simulation
    // Prefix sharing (experiments/PrefixSharing): this many requests with one system prompt,
    // run with and without forkSequence; 0 leaves it out.
    std::uint32_t prefixRequests = 8;
    std::uint32_t prefixOutputTokens = 16;
};

// Chapter item 12 on the session's device: the model as the target (study.targetFormat) and
// as each draft scheme, two engines resident at once.
struct SpeculativeRequest {
    std::string prompt = "Write a short story about a lighthouse keeper who finds a message in a "
                         "bottle.";
    bool chat = true;
    experiments::SpeculativeStudyOptions study; // its progress and cancel are the job's
    // The device and kernel options, for a session loaded without a backend (the CLI); a
    // session with a Vulkan engine uses that engine's.
    std::optional<EngineOptions> engine;
};

// What the caller learns about a model that finished loading.
struct LoadedModelSummary {
    ModelRecordPtr card;
    std::filesystem::path path;
    std::string displayName;
    std::string backend;
    bool chatTemplate = false; // a known chat format was recognised
    std::uint32_t contextLength = 0;
    double warmupSeconds = 0; // the untimed warm-up run (0: none)
    // The Vulkan device the load was sized for and what it has (its largest device-local heap,
    // or what LoadOptions::available said); empty and 0 for the CPU reference. Found on the
    // lab's thread, so the window never enumerates devices on its own.
    std::string deviceName;
    std::uint64_t deviceBytes = 0;
};

// A generation format switched in place (Engine::setWeightFormat: no file read, same context).
struct FormatSwitch {
    std::string format;
    std::string backend;
    double switchSeconds = 0; // re-pack + upload
    double warmupSeconds = 0; // the untimed warm-up run after it
};

struct LoadOptions {
    BackendChoice choice;
    bool buildBackend = true; // false: model and tokenizer only (reports that build their own)
    bool warmUp = true;       // run a tiny untimed prefill + decode once the backend is built
    // What the device and the host have, for the footprint check before the backend is
    // built (compute/session/LoadFootprint); unset: measured.
    MemoryAvailability available;
};

class LabSession {
public:
    // An empty factory: the backend follows LoadOptions::choice; a given one (tests) wins.
    explicit LabSession(BackendFactory factory = {});
    ~LabSession();
    LabSession(const LabSession&) = delete;
    LabSession& operator=(const LabSession&) = delete;

    // Loads a model file or folder. The previous model stays until `commit` (if given) agrees:
    // false means the load was cancelled, nothing changes and nullopt comes back. Throws on a
    // bad file, a bad choice, or a cancel seen before the commit point (JobCancelled). A model
    // whose estimated footprint (LoadFootprint) exceeds what the device or the host has is
    // refused with a models::ModelError naming both figures before anything is built; the
    // previous model keeps working.
    std::optional<LoadedModelSummary> load(const std::filesystem::path& path,
                                           const LoadOptions& options,
                                           const JobControl& control = {},
                                           const std::function<bool()>& commit = {});
    bool hasModel() const { return static_cast<bool>(state_); }
    const models::LoadedModel& model() const;
    const models::Tokenizer& tokenizer() const;
    const std::optional<models::ChatFormat>& chatFormat() const;
    DecoderBackend& backend();
    std::string backendName() const;
    // The Vulkan engine's current weight format ("fp32" for the CPU reference).
    std::string generationFormat() const;

    // The request's prompt as token ids (chat template, context check).
    std::vector<std::int32_t> promptIds(const GenerationRequest& request) const;
    // Throws JobCancelled only before the first token; a run stopped later returns its record
    // with cancelled set. The final record carries ids and text.
    RunRecordPtr generate(const GenerationRequest& request, const GenerationEvents& events = {},
                          const JobControl& control = {});
    // Chapter item 1: the same prompt and maxNewTokens greedy tokens, cached then uncached.
    CachingComparisonPtr compareCaching(const GenerationRequest& request,
                                        const JobControl& control = {});
    // The residual stream of a prompt on the CPU reference over the stored tensors (items 9
    // and 10, `report activations`); a generation records its own.
    std::shared_ptr<const experiments::ResidualRecording>
    recordResidualStream(const std::vector<std::int32_t>& ids);
    // Chapter item 8 over every projection matrix.
    std::vector<Table> weightReport(const std::vector<models::QuantSchemeSpec>& schemes,
                                    const JobControl& control = {});
    // Chapter item 11; progress per scheme with an estimate of the time left.
    std::vector<Table> qualityReport(const QualityRequest& request, const JobControl& control = {});
    // Re-packs the engine's weights in `format` in place and warms it (Vulkan only; throws
    // std::invalid_argument for the CPU reference or a format without a kernel).
    FormatSwitch setGenerationFormat(const std::string& format, const JobControl& control = {});
    // Chapter item 1: one attention head timed both ways on the session's Vulkan device (the
    // engine's; without one, the default device). Needs no model.
    std::vector<Table> attentionHeadCost(const experiments::AttentionHeadOptions& options,
                                         const JobControl& control = {});
    experiments::NextTokenDistributionPtr softLabels(const SoftLabelRequest& request,
                                                     const JobControl& control = {});
    // Item 6 on the Vulkan engine (throws std::invalid_argument on the CPU reference); the
    // roofline uses the device's read bandwidth, measured once per load.
    std::vector<Table> batchingSweep(const BatchingRequest& request,
                                     const JobControl& control = {});
    // Item 7 on the Vulkan engine: both policies run for real and simulated.
    std::vector<Table> schedulerComparison(const SchedulingRequest& request,
                                           const JobControl& control = {});
    // The requests of a scheduling run: the mix file's prompts tokenized, or generated ones.
    std::vector<experiments::ServingRequest>
    servingRequests(const SchedulingRequest& request) const;
    // Item 12 on Vulkan (throws std::invalid_argument on the CPU reference backend, for a
    // scheme without a GPU kernel, or a study longer than the context).
    experiments::SpeculativeStudyPtr speculativeDecoding(const SpeculativeRequest& request,
                                                         const JobControl& control = {});
    // KV cache on or off for later runs (the CLI's --no-cache).
    void setCached(bool cached);
    // A tiny prefill + decode whose timings are thrown away, so the first recorded run holds
    // no one-off pipeline cost; returns its seconds (0: nothing to warm on this backend).
    double warmUp();

private:
    struct State;
    // Runs a set of f32 weights: the GPU engine in F32 on the session's device, or the CPU
    // reference (the quality report and the soft labels; never the generation format).
    experiments::BackendFactory schemeBackendFactory();
    State& state();
    const State& state() const;
    BackendFactory factory_;
    std::unique_ptr<State> state_;
};

} // namespace inferscope::compute
