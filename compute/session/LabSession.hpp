#pragma once
// One lab session, below Qt: the loaded model, its tokenizer and chat format, the backend that
// runs it (the Vulkan Engine in a weight format on a device, or the CPU reference), and
// generation over them. The window (through widgets/LabJobs on a worker thread) and
// inferscope-cli drive the same session, so a chapter figure is computed one way only.
//
// The labs are not here: each experiment is its own folder under compute/experiments with a
// run(LabContext&, request, JobControl) that takes this session as its LabContext. A new
// experiment adds its files there, never a member here.
#include "compute/engine/Backends.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"
#include "compute/lab/RunRecords.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/Sampler.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inferscope::compute {

struct GenerationRequest : PromptSpec {
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
    std::function<void(RunDeltaPtr delta)> progress;   // what changed, at most every 40 ms
    std::function<void(ActivationRecordPtr record)> activations;
};

// What the caller learns about a model that finished loading.
struct LoadedModelSummary {
    ModelRecordPtr card;
    std::filesystem::path path;
    std::string displayName;
    std::string backend;
    // The weight format the engine generates with ("fp32" for the CPU reference).
    std::string generationFormat;
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

class LabSession : public LabContext {
public:
    // An empty factory: the backend follows LoadOptions::choice; a given one (tests) wins.
    explicit LabSession(BackendFactory factory = {});
    ~LabSession() override;
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

    // LabContext
    bool hasModel() const override { return static_cast<bool>(state_); }
    const models::LoadedModel& model() const override;
    std::shared_ptr<const models::LoadedModel> sharedModel() const override;
    const models::Tokenizer& tokenizer() const override;
    const std::optional<models::ChatFormat>& chatFormat() const override;
    bool hasBackend() const override;
    DecoderBackend& backend() override;
    std::vector<std::int32_t> promptIds(const PromptSpec& prompt) const override;
    double readBandwidth() override;
    std::shared_ptr<const ResidualRecording>
    recordResidualStream(const std::vector<std::int32_t>& ids) override;
    void engineRepacked() override;

    std::string backendName() const;
    // The Vulkan engine's current weight format ("fp32" for the CPU reference).
    std::string generationFormat() const;

    // Throws JobCancelled only before the first token; a run stopped later returns its record
    // with cancelled set. The final record carries ids and text.
    RunRecordPtr generate(const GenerationRequest& request, const GenerationEvents& events = {},
                          const JobControl& control = {});
    // Re-packs the engine's weights in `format` in place and warms it (Vulkan only; throws
    // std::invalid_argument for the CPU reference or a format without a kernel).
    FormatSwitch setGenerationFormat(const std::string& format, const JobControl& control = {});
    // KV cache on or off for later runs (the CLI's --no-cache).
    void setCached(bool cached);
    // A tiny prefill + decode whose timings are thrown away, so the first recorded run holds
    // no one-off pipeline cost; returns its seconds (0: nothing to warm on this backend).
    double warmUp();
    // With the weights on the Vulkan device, drops the model file's pages from resident
    // memory again after a host lab read them (the engine does after each upload); they come
    // back from the page cache when read. No-op for the CPU reference, which reads them
    // every step.
    void releaseMappedWeightPages() const;

private:
    struct State;
    State& state();
    const State& state() const;
    BackendFactory factory_;
    std::unique_ptr<State> state_;
};

} // namespace inferscope::compute
