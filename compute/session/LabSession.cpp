#include "compute/session/LabSession.hpp"

#include "compute/Stopwatch.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/engine/Generation.hpp"
#include "compute/experiments/bench/Bench.hpp"
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "compute/experiments/run/ModelInfo.hpp"
#include "compute/session/ActivationCollector.hpp"
#include "compute/session/RunRecorder.hpp"
#include "compute/vulkan/BandwidthProbe.hpp"
#include "models/ModelError.hpp"
#include "models/tokenizer/TextStream.hpp"

#include <algorithm>

namespace inferscope::compute {

namespace {
// Streaming deltas go out at most this often; the text goes every token.
constexpr auto kProgressInterval = std::chrono::milliseconds(40);
// The warm-up appends one chunk per matrix-kernel tile (Kernels::shapeFor: 16 or more, 8, 4
// and 2 tokens), then two decode steps, so no prompt length builds a pipeline inside a run.
constexpr std::uint32_t kWarmupChunkTokens[] = {16, 8, 4, 2};
constexpr std::uint32_t kWarmupDecodeSteps = 2;

} // namespace

struct LabSession::State {
    std::shared_ptr<const models::LoadedModel> model;
    std::unique_ptr<models::Tokenizer> tokenizer;
    std::optional<models::ChatFormat> chatFormat;
    // Declared before the backend, which holds an observer that points at it.
    std::unique_ptr<ActivationCollector> activations = std::make_unique<ActivationCollector>();
    std::unique_ptr<DecoderBackend> backend;
    // A CPU reference over the stored tensors for recordResidualStream, made when first needed.
    std::shared_ptr<models::ReferenceTransformer> reference;
    bool warm = false;              // warmed since the last load or format switch
    double readBytesPerSecond = -1; // measured once per load (-1: not yet)
    Engine* engine() { return backend ? backend->gpuEngine() : nullptr; }
};

LabSession::LabSession(BackendFactory factory) : factory_(std::move(factory)) {}
LabSession::~LabSession() = default;

LabSession::State& LabSession::state() {
    if (!state_) throw std::invalid_argument("no model is loaded");
    return *state_;
}

const LabSession::State& LabSession::state() const {
    if (!state_) throw std::invalid_argument("no model is loaded");
    return *state_;
}

const models::LoadedModel& LabSession::model() const {
    return *state().model;
}
std::shared_ptr<const models::LoadedModel> LabSession::sharedModel() const {
    return state().model;
}
const models::Tokenizer& LabSession::tokenizer() const {
    return *state().tokenizer;
}
const std::optional<models::ChatFormat>& LabSession::chatFormat() const {
    return state().chatFormat;
}
bool LabSession::hasBackend() const {
    return state_ && state_->backend;
}
DecoderBackend& LabSession::backend() {
    auto& s = state();
    if (!s.backend) throw std::logic_error("this session was loaded without a backend");
    return *s.backend;
}
std::string LabSession::backendName() const {
    return hasBackend() ? state_->backend->name() : std::string();
}

std::string LabSession::generationFormat() const {
    if (!hasBackend()) return {};
    if (auto* engine = state_->engine())
        return std::string(weightFormatName(engine->weightFormat()));
    return "fp32";
}

double LabSession::readBandwidth() {
    auto& s = state();
    if (s.readBytesPerSecond < 0) {
        auto* engine = s.engine();
        s.readBytesPerSecond =
            engine ? measureReadBandwidth(engine->context()).gigabytesPerSecond * 1e9 : 0;
    }
    return s.readBytesPerSecond;
}

std::optional<LoadedModelSummary> LabSession::load(const std::filesystem::path& path,
                                                   const LoadOptions& options,
                                                   const JobControl& control,
                                                   const std::function<bool()>& commit) {
    control.report("Reading " + path.filename().string(), 5);
    auto next = std::make_unique<State>();
    auto model = std::make_shared<models::LoadedModel>(models::loadModel(path));
    control.throwIfCancelled();

    // Refuse what cannot fit before the backend allocates anything (the previous model stays).
    std::optional<LoadFootprint> footprint;
    if (options.buildBackend) {
        footprint = estimateLoadFootprint(*model, options.choice, options.available);
        if (const auto refusal = footprint->refusal(); !refusal.empty())
            throw models::ModelError(refusal);
    }

    control.report("Preparing the tokenizer", 25);
    next->tokenizer = std::make_unique<models::Tokenizer>(model->tokenizer);
    try {
        next->chatFormat = models::detectChatFormat(model->tokenizer);
    } catch (const std::exception&) {
        next->chatFormat.reset(); // plain prompts only
    }
    control.throwIfCancelled();

    if (options.buildBackend) {
        control.report("Preparing weights for the backend", 35);
        auto* collector = next->activations.get();
        const auto factory = factory_ ? factory_ : backendFactory(options.choice);
        next->backend = factory(*model, [collector](std::uint32_t layer, std::uint32_t position,
                                                    std::span<const float> values) {
            collector->observe(layer, position, values);
        });
        control.throwIfCancelled();
    }

    control.report("Measuring the model", 85);
    auto card = std::make_shared<ModelRecord>();
    card->path = path.string();
    card->config = model->config;
    card->parameters = model->weights.totalElements();
    card->info = experiments::modelInfo(*model);
    card->weightBytes = experiments::weightBytesByType(*model);
    card->kvCache = experiments::kvCacheBytes(model->config);
    if (footprint) card->footprint = loadFootprintTable(*footprint);

    LoadedModelSummary summary;
    summary.card = card;
    summary.path = path;
    summary.displayName =
        model->config.name.empty() ? model->path.filename().string() : model->config.name;
    summary.backend = next->backend ? next->backend->name() : std::string();
    summary.chatTemplate = next->chatFormat.has_value();
    summary.contextLength = model->config.contextLength;
    if (footprint && footprint->backend == "vulkan") {
        summary.deviceName = footprint->device;
        summary.deviceBytes = footprint->deviceAvailableBytes.value_or(0);
    }
    next->model = std::move(model);
    if (commit && !commit()) return std::nullopt;
    state_ = std::move(next); // only now does the previous model go
    summary.generationFormat = generationFormat();
    if (options.buildBackend && options.warmUp) {
        control.report("Warming the pipelines (an untimed run)", 95);
        summary.warmupSeconds = warmUp();
    }
    control.report("Ready", 100);
    return summary;
}

void LabSession::releaseMappedWeightPages() const {
    if (state_ && state_->model && state_->engine()) state_->model->weights.releaseResidentPages();
}

double LabSession::warmUp() {
    auto& s = state();
    auto* engine = s.engine();
    // The CPU reference has no pipelines to build: its first run costs what later ones do.
    if (!engine) return 0;
    auto& backend = *s.backend;
    const auto start = Clock::now();
    const auto probes = engine->probes();
    // The window's runs use the residual probes in the prefill: warm that variant too.
    engine->setProbes({.residualMax = true, .residualStream = true});
    try {
        const auto vocab = std::max<std::uint32_t>(1, s.model->config.vocabSize);
        // Sized to the model's context: the sequence starts again when the next append would
        // not fit, and a chunk longer than the context (no prompt can be) is skipped, so a
        // model with a 16-token context warms up too.
        const std::uint32_t room =
            std::min(engine->kvCache().maxPositionsPerSequence(),
                     s.model->config.contextLength ? s.model->config.contextLength
                                                   : engine->kvCache().maxPositionsPerSequence());
        std::uint32_t used = 0;
        auto appendWithin = [&](std::span<const std::int32_t> tokens) {
            if (tokens.size() > room) return;
            if (used + tokens.size() > room) {
                backend.reset();
                used = 0;
            }
            backend.append(tokens);
            used += std::uint32_t(tokens.size());
        };
        backend.reset();
        for (const std::uint32_t tokens : kWarmupChunkTokens) {
            std::vector<std::int32_t> chunk(tokens);
            for (std::uint32_t i = 0; i < tokens; ++i)
                chunk[i] = std::int32_t((i * 7 + tokens) % vocab);
            appendWithin(chunk);
        }
        engine->setProbes({});
        for (std::uint32_t i = 0; i < kWarmupDecodeSteps; ++i) {
            const std::int32_t token = std::int32_t((i + 3) % vocab);
            appendWithin(std::span<const std::int32_t>(&token, 1));
        }
        backend.reset();
    } catch (...) {
        engine->setProbes(probes);
        backend.reset();
        throw;
    }
    engine->setProbes(probes);
    s.warm = true;
    return secondsSince(start);
}

std::vector<std::int32_t> LabSession::promptIds(const PromptSpec& request) const {
    const auto& s = state();
    for (auto id : request.promptTokenIds)
        if (id < 0 || std::uint32_t(id) >= s.model->config.vocabSize)
            throw std::invalid_argument("prompt token id " + std::to_string(id) +
                                        " is outside the vocabulary");
    std::string text = request.prompt;
    if (request.promptTokenIds.empty() && request.chat) {
        if (!s.chatFormat)
            throw std::invalid_argument("this model has no chat template we recognise; "
                                        "turn off the chat template to send the text as is");
        std::vector<models::ChatMessage> messages;
        if (!request.systemPrompt.empty()) messages.push_back({"system", request.systemPrompt});
        messages.push_back({"user", request.prompt});
        text = models::formatChat(*s.chatFormat, messages, true);
    }
    auto ids = request.promptTokenIds.empty() ? s.tokenizer->encode(text, true, true)
                                              : request.promptTokenIds;
    if (ids.empty()) throw std::invalid_argument("the prompt encodes to no tokens");
    const auto& config = s.model->config;
    if (config.contextLength > 0 &&
        ids.size() + static_cast<std::size_t>(std::max(0, request.maxNewTokens)) >
            config.contextLength)
        throw std::invalid_argument("the prompt (" + std::to_string(ids.size()) +
                                    " tokens) plus the tokens to generate exceed the model's "
                                    "context of " +
                                    std::to_string(config.contextLength));
    return ids;
}

RunRecordPtr LabSession::generate(const GenerationRequest& request, const GenerationEvents& events,
                                  const JobControl& control) {
    auto& s = state();
    auto& backend = this->backend();
    auto* engine = s.engine();
    const auto ids = promptIds(request);
    const auto& config = s.model->config;

    GenerationOptions options;
    options.maxNewTokens = request.maxNewTokens;
    options.sampling = request.sampling;
    if (request.stopAtStopTokens) options.stopTokens = s.tokenizer->stopTokens();
    options.cancel = control.cancel;

    RunRecord facts;
    facts.backend = backend.name();
    facts.promptTokens = static_cast<std::int64_t>(ids.size());
    facts.config = config;
    facts.warm = s.warm;
    if (engine) {
        facts.kvBlockSize = engine->kvCache().blockSize();
        facts.kvCapacityBlocks = engine->kvCache().capacityBlocks();
        ProbeOptions probes;
        probes.kernelTimings = request.kernelTimings;
        probes.residualMax = request.collectActivations; // the prefill only, see below
        // The level counts need every value: the same prefill copies its residual rows.
        probes.residualStream = request.collectActivations && request.recordResidualStream;
        engine->setProbes(probes);
        if (request.kernelTimings) {
            facts.readBytesPerSecond = readBandwidth();
            facts.decodeWeightBytes = matrixBytesPerDecodeStep(*engine);
        }
    }
    if (events.started) events.started(facts.promptTokens);
    if (request.collectActivations && !engine)
        s.activations->begin(config.layers, config.hiddenSize);
    else
        s.activations->stop();

    RunRecorder recorder(std::move(facts));
    models::TextStream text(*s.tokenizer); // the text token by token, whole characters only
    ActivationRecordPtr prefillActivations;
    // The Vulkan prefill's copy of its residual rows, announced once the run is done.
    std::shared_ptr<const ResidualRecording> streamRecording;
    auto lastProgress = Clock::now();
    auto onToken = [&](std::size_t index, std::int32_t token, double seconds) {
        const StepProbes* probes = backend.lastStepProbes();
        if (index == 0 && engine && probes) {
            if (request.collectActivations && !probes->residualMax.empty()) {
                prefillActivations =
                    activationRecord(probes->residualMax, std::int64_t(ids.size()), nullptr);
                streamRecording = residualRecording(*probes, config, ids.size());
                if (events.activations) events.activations(prefillActivations);
            }
            // The prompt only: decode steps skip the reduction and the copies.
            auto keep = engine->probes();
            keep.residualMax = false;
            keep.residualStream = false;
            engine->setProbes(keep);
        } else if (index == 0 && s.activations->enabled()) {
            s.activations->stop(); // the prompt only
            prefillActivations = activationRecord(
                s.activations->maxAbs(), s.activations->positions(),
                request.recordResidualStream ? s.activations->recording() : nullptr);
            if (events.activations) events.activations(prefillActivations);
        }
        recorder.tokenArrived(index, seconds, probes, backend,
                              engine ? engine->kvCache().usedBlocks() : 0);
        if (events.text)
            if (const auto piece = text.add(token); !piece.empty()) events.text(piece);
        const auto now = Clock::now();
        if (events.progress && (index == 0 || now - lastProgress >= kProgressInterval)) {
            lastProgress = now;
            events.progress(recorder.takeDelta());
        }
    };
    GenerationResult result;
    try {
        result = compute::generate(backend, ids, options, onToken);
    } catch (...) {
        s.activations->stop();
        throw;
    }
    s.activations->stop();

    if (!engine) // the Vulkan probes describe the last step, already sampled above
        recorder.finalSample(std::int64_t(ids.size() + result.stepSeconds.size()), backend);
    // The prefill's residual rows make the level counts. They are announced after the run,
    // as a second record: the panels that draw them then redraw apart from the prefill's
    // own updates, and their tables were computed here, not on the window's event loop.
    if (prefillActivations && streamRecording && !control.cancelled() && events.activations)
        events.activations(activationRecord(prefillActivations->maxAbsPerLayer,
                                            prefillActivations->positions,
                                            std::move(streamRecording)));
    auto record = std::make_shared<RunRecord>(std::move(recorder.record()));
    record->promptIds = ids;
    record->generatedIds = result.generatedIds;
    record->text = s.tokenizer->decode(result.generatedIds, true);
    record->finished = true;
    record->cancelled = result.cancelled;
    return record;
}

std::shared_ptr<const ResidualRecording>
LabSession::recordResidualStream(const std::vector<std::int32_t>& ids) {
    auto& s = state();
    if (!s.reference) // from the stored tensors: no fp32 copy of the weights
        s.reference =
            std::make_shared<models::ReferenceTransformer>(s.model->config, s.model->weights);
    return std::make_shared<ResidualRecording>(
        experiments::recordResidualStream(*s.reference, ids));
}

void LabSession::engineRepacked() {
    state().warm = false;
    warmUp();
}

FormatSwitch LabSession::setGenerationFormat(const std::string& name, const JobControl& control) {
    auto* engine = state().engine();
    if (!engine)
        throw std::invalid_argument(name + " runs on the Vulkan backend; the " + backendName() +
                                    " backend computes in fp32");
    const auto format = weightFormatFromName(name);
    if (!format)
        throw std::invalid_argument(name +
                                    " is host-analysis only: the GPU engine has no kernel for it");
    FormatSwitch result;
    result.format = name;
    control.report("Re-packing the weights as " + name + "…", 10);
    const auto start = Clock::now();
    engine->setWeightFormat(*format);
    result.switchSeconds = secondsSince(start);
    state().warm = false;
    control.report("Warming the pipelines (an untimed run)", 80);
    result.warmupSeconds = warmUp();
    result.backend = backendName();
    control.report("Ready", 100);
    return result;
}

void LabSession::setCached(bool cached) {
    auto& backend = this->backend();
    if (auto* cache = backend.cachingSwitch())
        cache->setCached(cached);
    else if (!cached)
        throw std::invalid_argument("the " + backend.name() +
                                    " backend cannot switch its cache off");
}

} // namespace inferscope::compute
