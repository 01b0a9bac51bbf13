#include "compute/session/LabSession.hpp"

#include "compute/ResourcePaths.hpp"
#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/Generation.hpp"
#include "compute/engine/VulkanBackend.hpp"
#include "compute/experiments/BatchingSweep.hpp"
#include "compute/experiments/Bench.hpp"
#include "compute/experiments/ModelInfo.hpp"
#include "compute/experiments/QualityReport.hpp"
#include "compute/experiments/Scheduler.hpp"
#include "compute/experiments/WeightReport.hpp"
#include "compute/vulkan/BandwidthProbe.hpp"
#include "models/ModelError.hpp"
#include "models/formats/TextFile.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

namespace inferscope::compute {

namespace {
using Clock = std::chrono::steady_clock;
// Streaming copies of the run record go out at most this often; the text goes every token.
constexpr auto kProgressInterval = std::chrono::milliseconds(40);
// The warm-up appends one chunk per matrix-kernel tile (Kernels::shapeFor: 16 or more, 8, 4
// and 2 tokens), then two decode steps, so no prompt length builds a pipeline inside a run.
constexpr std::uint32_t kWarmupChunkTokens[] = {16, 8, 4, 2};
constexpr std::uint32_t kWarmupDecodeSteps = 2;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Length of the longest prefix of bytes that ends on a complete UTF-8 character, so a token
// that carries half of a character is held back until the rest arrives.
std::size_t completeUtf8Prefix(const std::string& bytes) {
    std::size_t end = bytes.size();
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, bytes.size()); ++back) {
        auto byte = static_cast<unsigned char>(bytes[bytes.size() - back]);
        if ((byte & 0xC0) == 0x80) continue; // continuation byte: look further back
        std::size_t need = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
        if (need > back) end = bytes.size() - back;
        break;
    }
    return end;
}

std::uint64_t sum(const std::vector<std::uint64_t>& values) {
    std::uint64_t total = 0;
    for (auto v : values) total += v;
    return total;
}

std::string describeSeconds(double seconds) {
    char text[48];
    if (seconds < 90)
        std::snprintf(text, sizeof text, "%.0f s", std::ceil(seconds));
    else
        std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
    return text;
}

// The prompt's residual stream as the Vulkan prefill copied it (ProbeOptions::residualStream),
// or null when the step did not hold exactly the prompt's positions.
std::shared_ptr<const experiments::ResidualRecording>
residualRecording(const StepProbes& probes, const models::ModelConfig& config,
                  std::size_t promptTokens) {
    if (probes.residualStreamRows == 0 || probes.residualStreamRows != promptTokens ||
        probes.residualStream.size() !=
            std::size_t(config.layers) * probes.residualStreamRows * config.hiddenSize)
        return nullptr;
    auto recording = std::make_shared<experiments::ResidualRecording>();
    recording->layers = config.layers;
    recording->positions = probes.residualStreamRows;
    recording->hidden = config.hiddenSize;
    recording->values = probes.residualStream; // the same [layer][position][dimension] order
    return recording;
}

// Computes what the activation panels show here, on the job's thread.
void withPanelTables(ActivationRecord& record) {
    record.panelTables = std::make_shared<const experiments::ActivationPanelTables>(
        experiments::activationPanelTables(record.maxAbsPerLayer, std::uint32_t(record.positions),
                                           record.recording.get()));
}
} // namespace

struct LabSession::State {
    std::shared_ptr<const models::LoadedModel> model;
    std::unique_ptr<models::Tokenizer> tokenizer;
    std::optional<models::ChatFormat> chatFormat;
    // Declared before the backend, which holds an observer that points at it.
    std::unique_ptr<ActivationCollector> activations = std::make_unique<ActivationCollector>();
    std::unique_ptr<DecoderBackend> backend;
    // A CPU reference over the stored tensors for `report activations` on a session without
    // one (recordResidualStream), made the first time it is needed.
    std::shared_ptr<models::ReferenceTransformer> reference;
    bool warm = false; // warmed since the last load or format switch
    // The device's streaming read bandwidth, measured once per model load the first time a
    // profiled run needs it (the kernel panel compares the matrix kernels against it).
    double readBytesPerSecond = 0;

    double readBandwidth(const VulkanContext& context) {
        if (readBytesPerSecond == 0)
            readBytesPerSecond = measureReadBandwidth(context).gigabytesPerSecond * 1e9;
        return readBytesPerSecond;
    }
    VulkanBackend* vulkan() { return dynamic_cast<VulkanBackend*>(backend.get()); }
    DecoderBackend& requireBackend() {
        if (!backend) throw std::logic_error("this session was loaded without a backend");
        return *backend;
    }
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
const models::Tokenizer& LabSession::tokenizer() const {
    return *state().tokenizer;
}
const std::optional<models::ChatFormat>& LabSession::chatFormat() const {
    return state().chatFormat;
}
DecoderBackend& LabSession::backend() {
    return state().requireBackend();
}
std::string LabSession::backendName() const {
    return state_ && state_->backend ? state_->backend->name() : std::string();
}

std::string LabSession::generationFormat() const {
    if (!state_ || !state_->backend) return {};
    if (auto* vulkan = dynamic_cast<VulkanBackend*>(state_->backend.get()))
        return std::string(weightFormatName(vulkan->engine().weightFormat()));
    return "fp32";
}

std::optional<LoadedModelSummary> LabSession::load(const std::filesystem::path& path,
                                                   const LoadOptions& options,
                                                   const JobControl& control,
                                                   const std::function<bool()>& commit) {
    auto checkCancel = [&] {
        if (control.cancelled()) throw JobCancelled();
    };
    const std::string fileName = path.filename().string();
    control.report("Reading " + fileName, 5);
    auto next = std::make_unique<State>();
    auto model = std::make_shared<models::LoadedModel>(models::loadModel(path));
    checkCancel();

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
    checkCancel();

    if (options.buildBackend) {
        control.report("Preparing weights for the backend", 35);
        auto* collector = next->activations.get();
        const auto factory = factory_ ? factory_ : backendFactory(options.choice);
        next->backend = factory(*model, [collector](std::uint32_t layer, std::uint32_t position,
                                                    std::span<const float> values) {
            collector->observe(layer, position, values);
        });
        checkCancel();
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
    if (options.buildBackend && options.warmUp) {
        control.report("Warming the pipelines (an untimed run)", 95);
        summary.warmupSeconds = warmUp();
    }
    control.report("Ready", 100);
    return summary;
}

double LabSession::warmUp() {
    auto& s = state();
    auto* vulkan = s.vulkan();
    // The CPU reference has no pipelines to build: its first run costs what later ones do.
    if (!vulkan) return 0;
    const auto start = Clock::now();
    auto& engine = vulkan->engine();
    const auto probes = engine.probes();
    // The window's runs use the residual probes in the prefill: warm that variant too.
    ProbeOptions warmProbes;
    warmProbes.residualMax = true;
    warmProbes.residualStream = true;
    engine.setProbes(warmProbes);
    try {
        const auto vocab = std::max<std::uint32_t>(1, s.model->config.vocabSize);
        vulkan->reset();
        for (const std::uint32_t tokens : kWarmupChunkTokens) {
            std::vector<std::int32_t> chunk(tokens);
            for (std::uint32_t i = 0; i < tokens; ++i)
                chunk[i] = std::int32_t((i * 7 + tokens) % vocab);
            vulkan->append(chunk);
        }
        engine.setProbes({});
        for (std::uint32_t i = 0; i < kWarmupDecodeSteps; ++i) {
            const std::int32_t token = std::int32_t((i + 3) % vocab);
            vulkan->append(std::span<const std::int32_t>(&token, 1));
        }
        vulkan->reset();
    } catch (...) {
        engine.setProbes(probes);
        vulkan->reset();
        throw;
    }
    engine.setProbes(probes);
    s.warm = true;
    return secondsSince(start);
}

std::vector<std::int32_t> LabSession::promptIds(const GenerationRequest& request) const {
    const auto& s = state();
    if (!request.promptTokenIds.empty()) {
        for (auto id : request.promptTokenIds)
            if (id < 0 || std::uint32_t(id) >= s.model->config.vocabSize)
                throw std::invalid_argument("prompt token id " + std::to_string(id) +
                                            " is outside the vocabulary");
    }
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
        ids.size() + static_cast<std::size_t>(request.maxNewTokens) > config.contextLength)
        throw std::invalid_argument("the prompt (" + std::to_string(ids.size()) +
                                    " tokens) plus the tokens to generate exceed the model's "
                                    "context of " +
                                    std::to_string(config.contextLength));
    return ids;
}

RunRecordPtr LabSession::generate(const GenerationRequest& request, const GenerationEvents& events,
                                  const JobControl& control) {
    auto& s = state();
    auto& backend = s.requireBackend();
    auto* vulkan = s.vulkan();
    auto ids = promptIds(request);
    const auto& config = s.model->config;

    GenerationOptions options;
    options.maxNewTokens = request.maxNewTokens;
    options.sampling = request.sampling;
    if (request.stopAtStopTokens) options.stopTokens = s.tokenizer->stopTokens();
    options.cancel = control.cancel;

    RunRecord live;
    live.backend = backend.name();
    live.promptTokens = static_cast<std::int64_t>(ids.size());
    live.config = config;
    live.warm = s.warm;
    if (vulkan) {
        const auto& cache = vulkan->engine().kvCache();
        live.kvBlockSize = cache.blockSize();
        live.kvCapacityBlocks = cache.capacityBlocks();
        ProbeOptions probes;
        probes.kernelTimings = request.kernelTimings;
        probes.residualMax = request.collectActivations; // the prefill only, see below
        // The level counts need every value: the same prefill copies its residual rows.
        probes.residualStream = request.collectActivations && request.recordResidualStream;
        vulkan->engine().setProbes(probes);
        if (request.kernelTimings) {
            live.readBytesPerSecond = s.readBandwidth(vulkan->engine().context());
            live.decodeWeightBytes = matrixBytesPerDecodeStep(vulkan->engine());
        }
    }
    if (events.started) events.started(live.promptTokens);

    if (request.collectActivations && !vulkan)
        s.activations->begin(config.layers, config.hiddenSize);
    else
        s.activations->stop();

    // KV bytes per layer as the backend counts them now (after the step that made this token).
    std::vector<std::uint64_t> usedByLayer, allocatedByLayer;
    auto kvSample = [&](std::int64_t tokens) {
        if (vulkan) {
            const auto& probes = vulkan->lastProbes();
            usedByLayer = probes.kvUsedBytesByLayer;
            allocatedByLayer = probes.kvAllocatedBytesByLayer;
        } else {
            usedByLayer = backend.kvUsedBytesByLayer();
            allocatedByLayer.clear();
        }
        KvSample sample{tokens, sum(usedByLayer), sum(allocatedByLayer), 0};
        if (vulkan) sample.usedBlocks = vulkan->engine().kvCache().usedBlocks();
        return sample;
    };

    std::vector<std::int32_t> generated;
    std::size_t emittedBytes = 0;
    std::shared_ptr<ActivationRecord> activationRecord;
    // The Vulkan prefill's copy of its residual rows, announced once the run is done.
    std::shared_ptr<const experiments::ResidualRecording> streamRecording;
    auto lastToken = Clock::now(), lastProgress = lastToken;
    auto onToken = [&](std::size_t index, std::int32_t token) {
        auto now = Clock::now();
        double seconds = std::chrono::duration<double>(now - lastToken).count();
        lastToken = now;
        if (index == 0) {
            live.prefillSeconds = seconds;
            if (vulkan) {
                const auto& probes = vulkan->lastProbes();
                live.prefillKernels = probes.kernels;
                if (request.collectActivations && !probes.residualMax.empty()) {
                    activationRecord = std::make_shared<ActivationRecord>();
                    activationRecord->maxAbsPerLayer = probes.residualMax;
                    activationRecord->positions = live.promptTokens;
                    streamRecording = residualRecording(probes, config, ids.size());
                    withPanelTables(*activationRecord);
                    if (events.activations) events.activations(activationRecord);
                }
                auto keep = vulkan->engine().probes();
                // The prompt only: decode steps skip the reduction and the copies.
                keep.residualMax = false;
                keep.residualStream = false;
                vulkan->engine().setProbes(keep);
            } else if (s.activations->enabled()) {
                s.activations->stop(); // the prompt only
                activationRecord = std::make_shared<ActivationRecord>();
                activationRecord->maxAbsPerLayer = s.activations->maxAbs();
                activationRecord->positions = s.activations->positions();
                if (request.recordResidualStream)
                    activationRecord->recording = s.activations->recording();
                withPanelTables(*activationRecord);
                if (events.activations) events.activations(activationRecord);
            }
        } else {
            live.stepSeconds.push_back(seconds);
            if (vulkan) {
                live.decodeKernels = vulkan->lastProbes().kernels;
                addKernelTimes(live.decodeKernelsTotal, vulkan->lastProbes().kernels);
            }
        }
        // The backend holds the prompt and the tokens before this one.
        live.kvSamples.push_back(kvSample(live.promptTokens + std::int64_t(index)));
        generated.push_back(token);
        live.generatedTokens = static_cast<std::int64_t>(generated.size());

        if (events.text) {
            std::string bytes = s.tokenizer->decode(generated, true);
            std::size_t complete = completeUtf8Prefix(bytes);
            if (complete > emittedBytes) {
                events.text(bytes.substr(emittedBytes, complete - emittedBytes));
                emittedBytes = complete;
            }
        }
        if (events.run && (index == 0 || now - lastProgress >= kProgressInterval)) {
            lastProgress = now;
            events.run(std::make_shared<const RunRecord>(live));
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

    // The final record takes the loop's own step timings (they exclude the sampling).
    auto record = std::make_shared<RunRecord>(live);
    record->prefillSeconds = result.prefillSeconds;
    record->stepSeconds = result.stepSeconds;
    record->generatedTokens = static_cast<std::int64_t>(result.generatedIds.size());
    if (!vulkan) // the Vulkan probes describe the last step, already sampled above
        record->kvSamples.push_back(
            kvSample(static_cast<std::int64_t>(ids.size() + result.stepSeconds.size())));
    std::sort(record->kvSamples.begin(), record->kvSamples.end(),
              [](const auto& a, const auto& b) { return a.tokens < b.tokens; });
    record->kvSamples.erase(
        std::unique(record->kvSamples.begin(), record->kvSamples.end(),
                    [](const auto& a, const auto& b) { return a.tokens == b.tokens; }),
        record->kvSamples.end());
    // Per layer from the cache's own accounting at the last sample.
    record->kvUsedPerLayer = usedByLayer;
    record->kvAllocatedPerLayer = allocatedByLayer;
    // The prefill's residual rows make the level counts. They are announced after the run,
    // as a second record: the panels that draw them then redraw apart from the prefill's
    // own updates, and their tables were computed here, not on the window's event loop.
    if (vulkan && activationRecord && streamRecording && !control.cancelled()) {
        auto updated = std::make_shared<ActivationRecord>(*activationRecord);
        updated->recording = std::move(streamRecording);
        withPanelTables(*updated);
        if (events.activations) events.activations(updated);
    }
    record->promptIds = ids;
    record->generatedIds = result.generatedIds;
    record->text = s.tokenizer->decode(result.generatedIds, true);
    record->finished = true;
    record->cancelled = result.cancelled;
    return record;
}

std::shared_ptr<const experiments::ResidualRecording>
LabSession::recordResidualStream(const std::vector<std::int32_t>& ids) {
    auto& s = state();
    if (!s.reference) // from the stored tensors: no fp32 copy of the weights
        s.reference =
            std::make_shared<models::ReferenceTransformer>(s.model->config, s.model->weights);
    return std::make_shared<experiments::ResidualRecording>(
        experiments::recordResidualStream(*s.reference, ids));
}

CachingComparisonPtr LabSession::compareCaching(const GenerationRequest& request,
                                                const JobControl& control) {
    auto& s = state();
    auto& backend = s.requireBackend();
    auto* vulkan = s.vulkan();
    auto* cpu = dynamic_cast<CachingSwitch*>(&backend);
    if (!vulkan && !cpu)
        throw std::invalid_argument("the " + backend.name() +
                                    " backend cannot switch its cache off");
    auto setCached = [&](bool cached) {
        if (vulkan)
            vulkan->engine().setCached(cached);
        else
            cpu->setCached(cached);
    };
    auto ids = promptIds(request);
    GenerationOptions options;
    options.maxNewTokens = request.maxNewTokens;
    options.sampling.greedy = true;  // identical tokens are only expected when greedy
    options.cancel = control.cancel; // no stop tokens: both runs make all N tokens
    s.activations->stop();
    if (vulkan) vulkan->engine().setProbes({});

    auto comparison = std::make_shared<CachingComparison>();
    comparison->promptTokens = static_cast<std::int64_t>(ids.size());
    // Peak memory per run, from the engine's own accounting (Vulkan only).
    auto startPeak = [&] {
        backend.reset();
        if (vulkan) vulkan->engine().resetPeakMemory();
    };
    auto peak = [&]() -> std::optional<PeakMemory> {
        if (!vulkan) return std::nullopt;
        const auto m = vulkan->engine().memory();
        PeakMemory p;
        p.weightBytes = m.weightBytes;
        p.kvBytes = m.peakKvAllocatedBytes;
        p.activationRows = m.peakActivationRows;
        p.activationBytesPerRow = m.activationBytesPerRow;
        p.reservedWithoutWeights = m.deviceBytes - m.weightBytes;
        return p;
    };
    control.report("Cached run…", 10);
    setCached(true);
    startPeak();
    auto cached = compute::generate(backend, ids, options);
    comparison->cachedPeak = peak();
    comparison->cachedStepMacs = cached.stepMacs;
    comparison->backend = backend.name();
    comparison->cachedPrefillSeconds = cached.prefillSeconds;
    comparison->cachedStepSeconds = cached.stepSeconds;
    comparison->cachedTokens = cached.generatedIds;
    if (!cached.cancelled) {
        control.report("Uncached run (recomputes the sequence each step)…", 40);
        setCached(false);
        GenerationResult uncached;
        try {
            startPeak();
            uncached = compute::generate(backend, ids, options);
        } catch (...) {
            setCached(true);
            throw;
        }
        comparison->backend += " vs " + backend.name();
        setCached(true);
        comparison->uncachedPrefillSeconds = uncached.prefillSeconds;
        comparison->uncachedStepSeconds = uncached.stepSeconds;
        comparison->uncachedTokens = uncached.generatedIds;
        comparison->uncachedStepMacs = uncached.stepMacs;
        comparison->uncachedPeak = peak();
        comparison->cancelled = uncached.cancelled;
    } else {
        comparison->cancelled = true;
    }
    backend.reset();
    return comparison;
}

std::vector<Table> LabSession::attentionHeadCost(const experiments::AttentionHeadOptions& options,
                                                 const JobControl& control) {
    std::unique_ptr<VulkanContext> own;
    const VulkanContext* context = nullptr;
    if (auto* vulkan = state_ ? state_->vulkan() : nullptr) {
        context = &vulkan->engine().context();
    } else {
        own = std::make_unique<VulkanContext>(ContextOptions{});
        context = own.get();
    }
    std::size_t done = 0;
    const auto points = experiments::measureAttentionHead(*context, options, [&](std::uint32_t n) {
        if (control.cancelled()) throw JobCancelled();
        control.report("One attention head at n = " + std::to_string(n) + "…",
                       int(100 * done++ / std::max<std::size_t>(1, options.lengths.size())));
    });
    return {experiments::attentionHeadTable(points, options.headDim, context->info().name)};
}

std::vector<Table> LabSession::weightReport(const std::vector<models::QuantSchemeSpec>& schemes,
                                            const JobControl& control) {
    const auto& s = state();
    if (schemes.empty()) throw std::invalid_argument("no scheme is ticked");
    control.report(
        "Packing every projection matrix with " + std::to_string(schemes.size()) + " schemes…", 5);
    experiments::WeightReportOptions options;
    options.schemes = schemes;
    auto tables = experiments::weightErrorReport(*s.model, options);
    if (control.cancelled()) throw JobCancelled();
    control.report("Done", 100);
    return tables;
}

std::vector<Table> LabSession::qualityReport(const QualityRequest& request,
                                             const JobControl& control) {
    const auto& s = state();
    const auto& tokenizer = *s.tokenizer;
    const auto& model = *s.model;
    experiments::QualityInputs inputs;
    inputs.schemes = request.schemes.empty() ? models::standardQuantSchemes() : request.schemes;

    if (request.perplexityTokens > 0) {
        const auto file = request.text ? *request.text : models::defaultCorpusPath();
        std::error_code error;
        if (request.text || request.requireText || std::filesystem::exists(file, error)) {
            inputs.perplexityTokens = tokenizer.encode(models::readTextFile(file), true, false);
            if (inputs.perplexityTokens.size() > std::size_t(request.perplexityTokens))
                inputs.perplexityTokens.resize(std::size_t(request.perplexityTokens));
            inputs.context =
                experiments::perplexityContext(inputs.perplexityTokens.size(), request.context);
            if (model.tokenizer.addBos) inputs.bosId = tokenizer.bos();
        } else {
            control.report("No corpus installed: perplexity skipped", -1);
        }
    }
    if (request.batteryQuestions != 0) {
        auto path = request.battery ? request.battery : findResource("factual-battery.json");
        if (!path && request.requireBattery)
            throw std::invalid_argument(
                "cannot find resources/factual-battery.json: pass a battery file");
        if (path && !s.chatFormat && request.requireBattery)
            throw std::invalid_argument("the battery needs a chat template, and this model has "
                                        "none we recognise");
        if (path && s.chatFormat) {
            auto battery = experiments::loadFactualBattery(*path);
            if (request.batteryQuestions > 0 &&
                battery.questions.size() > std::size_t(request.batteryQuestions))
                battery.questions.resize(std::size_t(request.batteryQuestions));
            for (const auto& question : battery.questions)
                inputs.battery.push_back(
                    {tokenizer.encode(
                         models::formatChat(*s.chatFormat, {{"user", question.question}}, true),
                         true, true),
                     question.accepted});
            inputs.maxNewTokens = battery.maxNewTokens;
            inputs.agreementTokens = request.agreementTokens >= 0
                                         ? request.agreementTokens
                                         : 12 * std::int32_t(inputs.battery.size());
        }
    }
    inputs.stopTokens = tokenizer.stopTokens();
    inputs.decode = [&](std::span<const std::int32_t> ids) { return tokenizer.decode(ids, true); };

    // Progress per scheme, with the time left estimated from the schemes done so far.
    std::vector<double> schemeSeconds;
    auto schemeStart = Clock::now();
    std::size_t current = 0, total = inputs.schemes.size();
    std::string currentName;
    auto percent = [&] {
        return int(std::min<std::size_t>(99, 100 * current / std::max<std::size_t>(1, total)));
    };
    auto timeLeft = [&] {
        auto left = experiments::estimatedSecondsLeft(schemeSeconds, total - current);
        return left ? ", about " + describeSeconds(*left) + " left" : std::string();
    };
    inputs.schemeStarted = [&](std::size_t index, std::size_t count, const std::string& name) {
        if (index > 0) schemeSeconds.push_back(secondsSince(schemeStart));
        schemeStart = Clock::now();
        current = index;
        total = count;
        currentName = name;
        control.report("Scheme " + std::to_string(index + 1) + " of " + std::to_string(count) +
                           ": " + name + timeLeft(),
                       percent());
        if (control.cancelled()) throw JobCancelled();
    };
    inputs.progress = [&](const std::string& line) {
        control.report(currentName.empty() ? line
                                           : line + " (scheme " + std::to_string(current + 1) +
                                                 " of " + std::to_string(total) + timeLeft() + ")",
                       percent());
        if (control.cancelled()) throw JobCancelled(); // unwinds out of the report
    };

    control.report("Measuring " + std::to_string(total) + " schemes…", 0);
    auto tables = experiments::qualityReport(model.weights, inputs, schemeBackendFactory());
    control.report("Done", 100);
    return tables;
}

experiments::BackendFactory LabSession::schemeBackendFactory() {
    // Each scheme runs from its own weights on f32 kernels: the GPU engine in F32 on the
    // session's device (never the generation format, which would re-quantize them), or the
    // CPU reference.
    std::optional<EngineOptions> engineOptions;
    if (auto* vulkan = state().vulkan()) {
        engineOptions = vulkan->engine().options();
        engineOptions->weightFormat = WeightFormat::F32;
        engineOptions->probes = {}; // measurements, not profiles
        engineOptions->cached = true;
    }
    const auto config = state().model->config;
    return [engineOptions,
            config](models::ReferenceWeights weights) -> std::unique_ptr<DecoderBackend> {
        if (engineOptions) {
            auto engine = std::make_shared<Engine>(config, std::move(weights), *engineOptions);
            return std::make_unique<VulkanBackend>(std::move(engine));
        }
        auto reference =
            std::make_shared<const models::ReferenceTransformer>(config, std::move(weights));
        return std::make_unique<CpuBackend>(reference, true);
    };
}

experiments::NextTokenDistributionPtr LabSession::softLabels(const SoftLabelRequest& request,
                                                             const JobControl& control) {
    auto& s = state();
    GenerationRequest prompt;
    prompt.prompt = request.prompt;
    prompt.chat = request.chat;
    prompt.maxNewTokens = 1;
    const auto ids = promptIds(prompt);
    const auto& tokenizer = *s.tokenizer;
    std::size_t step = 0;
    const std::size_t steps = request.schemes.size() + 1;
    auto result = experiments::measureNextTokenDistribution(
        s.model->weights, ids, request.prompt, request.schemes, schemeBackendFactory(),
        // A token can hold part of a UTF-8 character: shown escaped, never as broken text.
        [&](std::int32_t id) {
            return models::printableBytes(
                tokenizer.decode(std::span<const std::int32_t>(&id, 1), true));
        },
        [&](const std::string& line) {
            if (control.cancelled()) throw JobCancelled();
            control.report(line, int(100 * step++ / steps));
        });
    control.report("Done", 100);
    return std::make_shared<const experiments::NextTokenDistribution>(std::move(result));
}

FormatSwitch LabSession::setGenerationFormat(const std::string& name, const JobControl& control) {
    auto& s = state();
    auto* vulkan = s.vulkan();
    if (!vulkan)
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
    vulkan->engine().setWeightFormat(*format);
    result.switchSeconds = secondsSince(start);
    s.warm = false;
    control.report("Warming the pipelines (an untimed run)", 80);
    result.warmupSeconds = warmUp();
    result.backend = vulkan->name();
    control.report("Ready", 100);
    return result;
}

namespace {
Engine& requireEngine(VulkanBackend* vulkan, const std::string& backend, const char* what) {
    if (!vulkan)
        throw std::invalid_argument(std::string(what) + " runs on the Vulkan engine; the " +
                                    backend + " backend serves one sequence");
    return vulkan->engine();
}
} // namespace

std::vector<Table> LabSession::batchingSweep(const BatchingRequest& request,
                                             const JobControl& control) {
    auto& s = state();
    auto& engine = requireEngine(s.vulkan(), backendName(), "the batching sweep");
    control.report("Measuring read bandwidth", 0);
    const double readBytesPerSecond = s.readBandwidth(engine.context());
    experiments::BatchSweepOptions options;
    options.batches = request.batches;
    options.context = request.context;
    options.steps = request.steps;
    options.exactnessSequences = request.exactnessSequences;
    options.readBytesPerSecond = readBytesPerSecond;
    options.progress = control.cancellingProgress();
    return experiments::batchSweepTables(experiments::runBatchSweep(engine, options));
}

std::vector<experiments::ServingRequest>
LabSession::servingRequests(const SchedulingRequest& request) const {
    const auto& s = state();
    std::vector<experiments::ServingRequest> requests;
    if (request.mixFile) {
        for (const auto& entry : experiments::loadRequestMix(*request.mixFile)) {
            auto ids = s.tokenizer->encode(entry.prompt, true, false);
            if (ids.empty())
                throw std::invalid_argument("a prompt of the mix file encodes to no tokens");
            requests.push_back({std::move(ids), entry.outputTokens});
        }
        return requests;
    }
    if (request.promptTokens == 0)
        throw std::invalid_argument("each generated request needs at least one prompt token");
    const auto lengths = experiments::skewedLengths(request.mix);
    const auto vocab = s.model->config.vocabSize;
    for (std::size_t i = 0; i < lengths.size(); ++i)
        requests.push_back(
            {benchPrompt(request.promptTokens, vocab, 1000 + std::uint32_t(i)), lengths[i]});
    return requests;
}

std::vector<Table> LabSession::schedulerComparison(const SchedulingRequest& request,
                                                   const JobControl& control) {
    auto& s = state();
    auto& engine = requireEngine(s.vulkan(), backendName(), "the scheduler comparison");
    if (request.slotCount == 0)
        throw std::invalid_argument("the scheduler needs at least one slot");
    const auto requests = servingRequests(request);
    experiments::SchedulerOptions options;
    options.slotCount = request.slotCount;
    options.verifyRequests = request.verifyRequests;
    options.simulateRequests = request.simulateRequests;
    options.simulateSlots = request.simulateSlots;
    options.mix = request.mix;
    options.chunkTokens = request.chunkTokens;
    options.progress = control.cancellingProgress();
    auto result = experiments::compareSchedulers(engine, requests, options);
    if (request.prefixRequests > 0) {
        // One system prompt, a distinct question after it per request.
        static const char* const systemPrompt =
            "You are the teaching assistant of an inference lab. Answer in one or two short "
            "sentences, in plain words, and say so when you are not sure. The student is "
            "learning what makes serving a language model cheap: batching, the KV cache and its "
            "blocks, quantized weights and speculative decoding.";
        static const char* const questions[] = {
            "What is a KV cache?",        "Why does batching help?",
            "What is a block table?",     "What does prefill compute?",
            "Why is decoding slow?",      "What is continuous batching?",
            "What does quantization do?", "What is speculative decoding?"};
        const auto prefix = s.tokenizer->encode(systemPrompt, true, false);
        std::vector<std::vector<std::int32_t>> tails;
        for (std::uint32_t i = 0; i < request.prefixRequests; ++i)
            tails.push_back(s.tokenizer->encode(" Question " + std::to_string(i + 1) + ": " +
                                                    questions[i % std::size(questions)],
                                                false, false));
        result.prefixSharing = experiments::comparePrefixSharing(
            engine, prefix, tails, request.prefixOutputTokens, control.cancellingProgress());
        result.blockSnapshots.push_back(result.prefixSharing->sharedSnapshot);
    }
    return experiments::schedulerTables(result);
}

experiments::SpeculativeStudyPtr LabSession::speculativeDecoding(const SpeculativeRequest& request,
                                                                 const JobControl& control) {
    auto& s = state();
    // Two engines of their own on the session engine's device (or, for a session loaded
    // without a backend, the request's).
    EngineOptions options = request.engine.value_or(EngineOptions{});
    if (s.backend)
        options = requireEngine(s.vulkan(), backendName(), "speculative decoding").options();
    const auto& study = request.study;
    for (const auto& name : study.draftFormats)
        if (!weightFormatFromName(name))
            throw std::invalid_argument("no GPU kernel for the draft scheme '" + name +
                                        "' (one of " + weightFormatNames() + ")");
    if (!weightFormatFromName(study.targetFormat))
        throw std::invalid_argument("no GPU kernel for the target format '" + study.targetFormat +
                                    "' (one of " + weightFormatNames() + ")");
    if (!study.runDraft.empty() && !weightFormatFromName(study.runDraft))
        throw std::invalid_argument("no GPU kernel for the draft scheme '" + study.runDraft + "'");
    std::uint32_t longest = 1;
    for (auto g : study.runDraftLengths) longest = std::max(longest, g);
    GenerationRequest prompt;
    prompt.prompt = request.prompt;
    prompt.chat = request.chat;
    // The context must hold the longest run plus one draft that may be rolled back.
    prompt.maxNewTokens = std::int32_t(
        std::max<std::uint32_t>(study.positions, std::uint32_t(study.runTokens)) + longest);
    const auto ids = promptIds(prompt);

    // Each engine holds only its own weights and a KV cache sized for one sequence.
    options.probes = {};
    options.cached = true;
    options.maxSequences = 1;
    options.maxContextPerSequence = 0;
    const std::uint32_t positions = std::uint32_t(ids.size()) + std::uint32_t(prompt.maxNewTokens);
    options.kvCapacityTokens =
        (positions + options.blockSize) / options.blockSize * options.blockSize;
    const auto model = s.model;
    const experiments::FormatBackendFactory factory = [model, options](const std::string& name) {
        auto engineOptions = options;
        engineOptions.weightFormat = *weightFormatFromName(name);
        auto built = std::make_shared<Engine>(*model, engineOptions);
        experiments::FormatBackend result;
        result.weightBytes = built->memory().weightBytes;
        result.deviceBytes = built->memory().deviceBytes;
        result.backend = std::make_unique<VulkanBackend>(std::move(built));
        return result;
    };
    auto studyOptions = study;
    studyOptions.progress = control.cancellingProgress();
    studyOptions.cancelled = [&control] { return control.cancelled(); };
    auto result = experiments::runSpeculativeStudy(factory, ids, studyOptions);
    if (result.cancelled) throw JobCancelled();
    return std::make_shared<const experiments::SpeculativeStudy>(std::move(result));
}

std::function<void(const std::string&, int)> JobControl::cancellingProgress() const {
    return [this](const std::string& stage, int percent) {
        report(stage, percent);
        if (cancelled()) throw JobCancelled();
    };
}

void LabSession::setCached(bool cached) {
    auto& backend = state().requireBackend();
    if (auto* vulkan = dynamic_cast<VulkanBackend*>(&backend))
        vulkan->engine().setCached(cached);
    else if (auto* cpu = dynamic_cast<CachingSwitch*>(&backend))
        cpu->setCached(cached);
    else if (!cached)
        throw std::invalid_argument("the " + backend.name() +
                                    " backend cannot switch its cache off");
}

} // namespace inferscope::compute
