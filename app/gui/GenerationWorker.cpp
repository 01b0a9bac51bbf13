// The Vulkan headers first: compute/Kernels.hpp names a member `slots`, which Qt's headers
// define as a macro.
#include "compute/VulkanBackend.hpp"
#include "compute/VulkanContext.hpp"

#include "app/gui/GenerationWorker.hpp"
#include "compute/CpuBackend.hpp"
#include "compute/experiments/ModelInfo.hpp"
#include "compute/experiments/QualityReport.hpp"
#include "compute/experiments/WeightReport.hpp"
#include "models/ChatTemplate.hpp"
#include "models/Tokenizer.hpp"

#include <QFileInfo>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>

namespace inferscope::gui {

namespace {
using Clock = std::chrono::steady_clock;
// Streaming copies of the run record are sent at most this often; the text goes every token.
constexpr auto kProgressInterval = std::chrono::milliseconds(40);

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

QString describe(const std::exception& error) {
    return QString::fromUtf8(error.what());
}

void registerMetaTypes() {
    qRegisterMetaType<LoadedModelInfo>();
    qRegisterMetaType<widgets::RunRecordPtr>();
    qRegisterMetaType<widgets::ActivationRecordPtr>();
    qRegisterMetaType<widgets::CachingComparisonPtr>();
    qRegisterMetaType<TablesPtr>();
}

// The CPU reference in both modes over one shared transformer: switching costs nothing.
class SwitchableCpuBackend : public compute::DecoderBackend, public CachingSwitch {
public:
    explicit SwitchableCpuBackend(std::shared_ptr<const models::ReferenceTransformer> reference)
        : cached_(reference, true), uncached_(reference, false) {}
    std::string name() const override { return current().name(); }
    void reset() override { current().reset(); }
    std::vector<float> append(std::span<const std::int32_t> tokens) override {
        return current().append(tokens);
    }
    std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) override {
        return current().appendAllLogits(tokens);
    }
    std::uint32_t vocabSize() const override { return current().vocabSize(); }
    std::uint64_t kvCacheBytes() const override { return current().kvCacheBytes(); }
    void setCached(bool cached) override {
        if (cached == useCache_) return;
        current().reset();
        useCache_ = cached;
    }
    bool cached() const override { return useCache_; }

private:
    compute::CpuBackend& current() { return useCache_ ? cached_ : uncached_; }
    const compute::CpuBackend& current() const { return useCache_ ? cached_ : uncached_; }
    compute::CpuBackend cached_, uncached_;
    bool useCache_ = true;
};

// The battery shipped in resources/: $INFERSCOPE_RESOURCES, ./resources, or the source tree
// next to the build folder that holds this executable (build-x/app/inferscope).
std::optional<std::filesystem::path> batteryPath() {
    std::vector<std::filesystem::path> candidates;
    if (const char* dir = std::getenv("INFERSCOPE_RESOURCES")) candidates.emplace_back(dir);
    candidates.emplace_back("resources");
    std::error_code error;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) {
        candidates.push_back(exe.parent_path().parent_path().parent_path() / "resources");
        candidates.push_back(exe.parent_path().parent_path().parent_path().parent_path() /
                             "resources"); // tests: build-x/tests/<layer>/
    }
    for (const auto& dir : candidates)
        if (std::filesystem::exists(dir / "factual-battery.json", error))
            return dir / "factual-battery.json";
    return std::nullopt;
}

std::vector<widgets::KernelSample> kernelSamples(const std::vector<compute::KernelTime>& kernels) {
    std::vector<widgets::KernelSample> samples;
    for (const auto& k : kernels) samples.push_back({k.kernel, k.dispatches, k.microseconds});
    return samples;
}
} // namespace

QString BackendChoice::key() const {
    return kind == Kind::Cpu ? QString("cpu") : QString("vulkan:%1").arg(deviceIndex);
}

BackendChoice BackendChoice::fromKey(const QString& key) {
    BackendChoice choice;
    if (key.startsWith("vulkan:")) {
        choice.kind = Kind::Vulkan;
        choice.deviceIndex = key.mid(7).toUInt();
    }
    return choice;
}

std::vector<BackendOption> availableBackends() {
    std::vector<BackendOption> options;
    try {
        for (const auto& device : compute::listDevices()) {
            BackendChoice choice;
            choice.kind = BackendChoice::Kind::Vulkan;
            choice.deviceIndex = device.index;
            options.push_back(
                {QObject::tr("Vulkan: %1 (%2)")
                     .arg(QString::fromStdString(device.name), QString::fromStdString(device.type)),
                 choice});
        }
    } catch (const std::exception&) {
        // No Vulkan loader or driver: the CPU reference alone.
    }
    options.push_back({QObject::tr("CPU reference"), BackendChoice{}});
    return options;
}

BackendFactory cpuBackendFactory() {
    return [](const models::LoadedModel& model, ResidualObserver observer) {
        auto reference = std::make_shared<models::ReferenceTransformer>(
            model.config, models::dequantizeAll(model.weights));
        if (observer) reference->setResidualObserver(std::move(observer));
        return std::make_unique<SwitchableCpuBackend>(std::move(reference));
    };
}

BackendFactory backendFactory(const BackendChoice& choice) {
    if (choice.kind == BackendChoice::Kind::Cpu) return cpuBackendFactory();
    return [choice](const models::LoadedModel& model,
                    ResidualObserver) -> std::unique_ptr<compute::DecoderBackend> {
        compute::EngineOptions options;
        options.device.deviceIndex = choice.deviceIndex;
        if (!choice.weightFormat.empty()) {
            auto format = compute::weightFormatFromName(choice.weightFormat);
            if (!format)
                throw std::invalid_argument("the GPU engine has no weight format '" +
                                            choice.weightFormat + "'");
            options.weightFormat = *format;
        }
        auto engine = std::make_shared<compute::Engine>(model, options);
        return std::make_unique<compute::VulkanBackend>(std::move(engine));
    };
}

// While enabled (the prompt's prefill): per layer, per dimension max |h|, and every value
// of the residual stream for the level counts.
struct ActivationCollector {
    bool enabled = false;
    std::vector<std::vector<float>> maxAbs;
    std::uint32_t positions = 0;
    std::uint32_t hidden = 0;
    std::vector<std::vector<std::vector<float>>> values; // [layer][position][dimension]

    void begin(std::uint32_t layers, std::uint32_t hiddenSize) {
        maxAbs.assign(layers, std::vector<float>(hiddenSize, 0.0f));
        values.assign(layers, {});
        positions = 0;
        hidden = hiddenSize;
        enabled = true;
    }
    void observe(std::uint32_t layer, std::uint32_t position, std::span<const float> row) {
        if (!enabled || layer >= maxAbs.size()) return;
        auto& max = maxAbs[layer];
        for (std::size_t i = 0; i < std::min(max.size(), row.size()); ++i)
            max[i] = std::max(max[i], std::fabs(row[i]));
        positions = std::max(positions, position + 1);
        auto& layerValues = values[layer];
        if (layerValues.size() <= position) layerValues.resize(position + 1);
        layerValues[position].assign(row.begin(), row.end());
        layerValues[position].resize(hidden, 0.0f);
    }
    // The residual stream as experiments::ResidualRecording, or null if a position is missing.
    std::shared_ptr<const compute::experiments::ResidualRecording> recording() const {
        if (maxAbs.empty() || positions == 0) return nullptr;
        auto r = std::make_shared<compute::experiments::ResidualRecording>();
        r->layers = std::uint32_t(maxAbs.size());
        r->positions = positions;
        r->hidden = hidden;
        r->values.reserve(std::size_t(r->layers) * positions * hidden);
        for (const auto& layer : values) {
            if (layer.size() != positions) return nullptr;
            for (const auto& row : layer) r->values.insert(r->values.end(), row.begin(), row.end());
        }
        return r;
    }
};

struct GenerationWorker::Session {
    std::shared_ptr<const models::LoadedModel> model;
    std::unique_ptr<models::Tokenizer> tokenizer;
    std::optional<models::ChatFormat> chatFormat;
    // Declared before the backend, which holds an observer that points at it.
    std::unique_ptr<ActivationCollector> activations = std::make_unique<ActivationCollector>();
    std::unique_ptr<compute::DecoderBackend> backend;
    // A CPU reference for what the GPU does not record (the whole residual stream), made
    // the first time it is needed.
    std::shared_ptr<models::ReferenceTransformer> reference;
};

GenerationWorker::GenerationWorker(BackendFactory factory, QObject* parent)
    : QObject(parent), factory_(std::move(factory)) {
    registerMetaTypes();
}

GenerationWorker::~GenerationWorker() = default;

void GenerationWorker::loadModel(quint64 job, const QString& path, const LoadTicketPtr& ticket,
                                 const BackendChoice& choice) {
    auto cancelled = [&] {
        if (!ticket || !ticket->cancelled()) return false;
        emit loadCancelled(job);
        return true;
    };
    try {
        QString fileName = QFileInfo(path).fileName();
        emit loadProgress(job, tr("Reading %1").arg(fileName), 5);
        auto session = std::make_unique<Session>();
        auto model = std::make_shared<models::LoadedModel>(
            models::loadModel(std::filesystem::path(path.toStdString())));
        if (cancelled()) return;

        emit loadProgress(job, tr("Preparing the tokenizer"), 25);
        session->tokenizer = std::make_unique<models::Tokenizer>(model->tokenizer);
        try {
            session->chatFormat = models::detectChatFormat(model->tokenizer);
        } catch (const std::exception&) {
            session->chatFormat.reset(); // plain prompts only
        }
        if (cancelled()) return;

        emit loadProgress(job, tr("Preparing weights for the backend"), 35);
        auto* collector = session->activations.get();
        const auto& factory = factory_ ? factory_ : backendFactory(choice);
        session->backend = factory(*model, [collector](std::uint32_t layer, std::uint32_t position,
                                                       std::span<const float> values) {
            collector->observe(layer, position, values);
        });
        if (cancelled()) return;

        emit loadProgress(job, tr("Measuring the model"), 90);
        auto card = std::make_shared<widgets::ModelRecord>();
        card->path = path.toStdString();
        card->config = model->config;
        card->info = compute::experiments::modelInfo(*model);
        card->weightBytes = compute::experiments::weightBytesByType(*model);
        card->kvCache = compute::experiments::kvCacheBytes(model->config);

        LoadedModelInfo info;
        info.card = card;
        info.path = path;
        info.displayName = QString::fromStdString(
            model->config.name.empty() ? model->path.filename().string() : model->config.name);
        info.backend = QString::fromStdString(session->backend->name());
        info.chatTemplate = session->chatFormat.has_value();
        info.contextLength = model->config.contextLength;
        session->model = std::move(model);
        if (ticket && !ticket->commit()) {
            emit loadCancelled(job);
            return;
        }
        session_ = std::move(session); // only now does the previous model go
        emit loadProgress(job, tr("Ready"), 100);
        emit modelLoaded(job, info);
    } catch (const std::exception& error) {
        emit loadFailed(job, describe(error));
    }
}

std::vector<std::int32_t> GenerationWorker::promptIds(const GenerationRequest& request) const {
    auto& session = *session_;
    std::string text = request.prompt;
    if (request.chat) {
        if (!session.chatFormat)
            throw std::runtime_error("this model has no chat template we recognise; "
                                     "turn off the chat template to send the text as is");
        std::vector<models::ChatMessage> messages;
        if (!request.systemPrompt.empty()) messages.push_back({"system", request.systemPrompt});
        messages.push_back({"user", request.prompt});
        text = models::formatChat(*session.chatFormat, messages, true);
    }
    auto ids = session.tokenizer->encode(text, true, true);
    if (ids.empty()) throw std::runtime_error("the prompt encodes to no tokens");
    const auto& config = session.model->config;
    if (config.contextLength > 0 &&
        ids.size() + static_cast<std::size_t>(request.maxNewTokens) > config.contextLength)
        throw std::runtime_error("the prompt (" + std::to_string(ids.size()) +
                                 " tokens) plus the tokens to generate exceed the model's "
                                 "context of " +
                                 std::to_string(config.contextLength));
    return ids;
}

void GenerationWorker::generate(quint64 job, const GenerationRequest& request,
                                const CancelFlag& cancel) {
    if (!session_) {
        emit generationFailed(job, tr("No model is loaded."));
        return;
    }
    auto& session = *session_;
    auto* vulkan = dynamic_cast<compute::VulkanBackend*>(session.backend.get());
    try {
        auto ids = promptIds(request);
        const auto& config = session.model->config;

        compute::GenerationOptions options;
        options.maxNewTokens = request.maxNewTokens;
        options.sampling = request.sampling;
        options.stopTokens = session.tokenizer->stopTokens();
        options.cancel = cancel.get();

        widgets::RunRecord live;
        live.backend = session.backend->name();
        live.promptTokens = static_cast<std::int64_t>(ids.size());
        live.config = config;
        if (vulkan) {
            const auto& cache = vulkan->engine().kvCache();
            live.kvBlockSize = cache.blockSize();
            live.kvCapacityBlocks = cache.capacityBlocks();
            compute::ProbeOptions probes;
            probes.kernelTimings = request.kernelTimings;
            probes.residualMax = request.collectActivations; // the prefill only, see below
            vulkan->engine().setProbes(probes);
        }
        emit generationStarted(job, static_cast<int>(ids.size()));

        if (request.collectActivations && !vulkan)
            session.activations->begin(config.layers, config.hiddenSize);
        else
            session.activations->enabled = false;

        // KV bytes as the backend counts them now (after the step that made this token).
        auto kvSample = [&](std::int64_t tokens) {
            widgets::KvSample sample{tokens, session.backend->kvCacheBytes()};
            if (vulkan) {
                const auto& probes = vulkan->lastProbes();
                sample.bytes = probes.kvBytesUsedPerLayer * config.layers;
                sample.allocatedBytes = probes.kvBytesAllocatedPerLayer * config.layers;
                sample.usedBlocks = vulkan->engine().kvCache().usedBlocks();
            }
            return sample;
        };

        std::vector<std::int32_t> generated;
        std::size_t emittedBytes = 0;
        std::shared_ptr<widgets::ActivationRecord> activationRecord;
        auto start = Clock::now(), lastToken = start, lastProgress = start;
        auto onToken = [&](std::size_t index, std::int32_t token) {
            auto now = Clock::now();
            double seconds = std::chrono::duration<double>(now - lastToken).count();
            lastToken = now;
            if (index == 0) {
                live.prefillSeconds = seconds;
                if (vulkan) {
                    const auto& probes = vulkan->lastProbes();
                    live.prefillKernels = kernelSamples(probes.kernels);
                    if (request.collectActivations && !probes.residualMax.empty()) {
                        activationRecord = std::make_shared<widgets::ActivationRecord>();
                        activationRecord->maxAbsPerLayer = probes.residualMax;
                        activationRecord->positions = live.promptTokens;
                        emit activationsReady(job, activationRecord);
                    }
                    auto keep = vulkan->engine().probes();
                    keep.residualMax = false; // the prompt only: decode steps skip the reduction
                    vulkan->engine().setProbes(keep);
                } else if (session.activations->enabled) {
                    session.activations->enabled = false; // the prompt only
                    activationRecord = std::make_shared<widgets::ActivationRecord>();
                    activationRecord->maxAbsPerLayer = session.activations->maxAbs;
                    activationRecord->positions = session.activations->positions;
                    activationRecord->recording = session.activations->recording();
                    emit activationsReady(job, activationRecord);
                }
            } else {
                live.stepSeconds.push_back(seconds);
                if (vulkan) live.decodeKernels = kernelSamples(vulkan->lastProbes().kernels);
            }
            // The backend holds the prompt and the tokens before this one.
            live.kvSamples.push_back(kvSample(live.promptTokens + std::int64_t(index)));
            generated.push_back(token);
            live.generatedTokens = static_cast<std::int64_t>(generated.size());

            std::string bytes = session.tokenizer->decode(generated, true);
            std::size_t complete = completeUtf8Prefix(bytes);
            if (complete > emittedBytes) {
                emit textGenerated(job, QString::fromUtf8(bytes.data() + emittedBytes,
                                                          qsizetype(complete - emittedBytes)));
                emittedBytes = complete;
            }
            if (index == 0 || now - lastProgress >= kProgressInterval) {
                lastProgress = now;
                emit runProgress(job, std::make_shared<const widgets::RunRecord>(live));
            }
        };
        auto result = compute::generate(*session.backend, ids, options, onToken);
        session.activations->enabled = false;

        // The final record takes the loop's own step timings (they exclude the sampling).
        auto record = std::make_shared<widgets::RunRecord>(live);
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
        if (!record->kvSamples.empty()) {
            const auto& last = record->kvSamples.back();
            record->kvUsedPerLayer.assign(config.layers, last.bytes / std::max(1u, config.layers));
            record->kvAllocatedPerLayer.assign(config.layers,
                                               last.allocatedBytes / std::max(1u, config.layers));
        }
        // The GPU reduces max |h| only; the level counts need every value: the CPU reference
        // records the prompt once more, after the timed run and before it is announced done.
        if (vulkan && activationRecord && !(cancel && cancel->load())) {
            if (!session.reference)
                session.reference = std::make_shared<models::ReferenceTransformer>(
                    config, models::dequantizeAll(session.model->weights));
            auto updated = std::make_shared<widgets::ActivationRecord>(*activationRecord);
            updated->recording = std::make_shared<compute::experiments::ResidualRecording>(
                compute::experiments::recordResidualStream(*session.reference, ids));
            emit activationsReady(job, updated);
        }
        record->finished = true;
        record->cancelled = result.cancelled;
        emit generationFinished(
            job, record,
            QString::fromStdString(session.tokenizer->decode(result.generatedIds, true)));

    } catch (const std::exception& error) {
        session.activations->enabled = false;
        emit generationFailed(job, describe(error));
    }
}

void GenerationWorker::compareCaching(quint64 job, const GenerationRequest& request,
                                      const CancelFlag& cancel) {
    if (!session_) {
        emit comparisonFailed(job, tr("No model is loaded."));
        return;
    }
    auto& session = *session_;
    auto* vulkan = dynamic_cast<compute::VulkanBackend*>(session.backend.get());
    auto* cpu = dynamic_cast<CachingSwitch*>(session.backend.get());
    if (!vulkan && !cpu) {
        emit comparisonFailed(job, tr("The %1 backend cannot switch its cache off.")
                                       .arg(QString::fromStdString(session.backend->name())));
        return;
    }
    auto setCached = [&](bool cached) {
        if (vulkan)
            vulkan->engine().setCached(cached);
        else
            cpu->setCached(cached);
    };
    try {
        auto ids = promptIds(request);
        compute::GenerationOptions options;
        options.maxNewTokens = request.maxNewTokens;
        options.sampling.greedy = true; // identical tokens are only expected when greedy
        options.cancel = cancel.get();  // no stop tokens: both runs make all N tokens
        session.activations->enabled = false;
        if (vulkan) vulkan->engine().setProbes({});

        auto comparison = std::make_shared<widgets::CachingComparison>();
        comparison->promptTokens = static_cast<std::int64_t>(ids.size());
        emit comparisonProgress(job, tr("Cached run…"));
        setCached(true);
        auto cached = compute::generate(*session.backend, ids, options);
        comparison->backend = session.backend->name();
        comparison->cachedPrefillSeconds = cached.prefillSeconds;
        comparison->cachedStepSeconds = cached.stepSeconds;
        comparison->cachedTokens = cached.generatedIds;
        if (!cached.cancelled) {
            emit comparisonProgress(job, tr("Uncached run (recomputes the sequence each step)…"));
            setCached(false);
            compute::GenerationResult uncached;
            try {
                uncached = compute::generate(*session.backend, ids, options);
            } catch (...) {
                setCached(true);
                throw;
            }
            comparison->backend += " vs " + session.backend->name();
            setCached(true);
            comparison->uncachedPrefillSeconds = uncached.prefillSeconds;
            comparison->uncachedStepSeconds = uncached.stepSeconds;
            comparison->uncachedTokens = uncached.generatedIds;
            comparison->cancelled = uncached.cancelled;
        } else {
            comparison->cancelled = true;
        }
        session.backend->reset();
        emit comparisonFinished(job, comparison);
    } catch (const std::exception& error) {
        emit comparisonFailed(job, describe(error));
    }
}

namespace {
struct ReportCancelled {};
} // namespace

void GenerationWorker::schemeReport(quint64 job, const SchemeReportRequest& request,
                                    const CancelFlag& cancel) {
    if (!session_) {
        emit schemeReportFailed(job, tr("No model is loaded."));
        return;
    }
    auto& session = *session_;
    try {
        std::vector<models::QuantSchemeSpec> schemes;
        for (const auto& name : request.schemes)
            schemes.push_back(models::parseQuantScheme(name.toStdString()));
        if (schemes.empty()) throw std::invalid_argument("no scheme is ticked");
        auto tables = std::make_shared<std::vector<compute::Table>>();
        if (!request.quality) {
            emit schemeReportProgress(
                job, tr("Packing every projection matrix with %1 schemes…").arg(schemes.size()), 5);
            compute::experiments::WeightReportOptions options;
            options.schemes = schemes;
            *tables = compute::experiments::weightErrorReport(*session.model, options);
            if (cancel && cancel->load()) throw ReportCancelled{};
            emit schemeReportProgress(job, tr("Done"), 100);
            emit schemeReportFinished(job, false, tables);
            return;
        }

        compute::experiments::QualityInputs inputs;
        inputs.schemes = schemes;
        const auto& tokenizer = *session.tokenizer;
        const auto& model = *session.model;
        if (request.perplexityTokens > 0) {
            std::ifstream in(models::defaultCorpusPath(), std::ios::binary);
            if (in) {
                std::ostringstream text;
                text << in.rdbuf();
                inputs.perplexityTokens = tokenizer.encode(text.str(), true, false);
                if (inputs.perplexityTokens.size() > std::size_t(request.perplexityTokens))
                    inputs.perplexityTokens.resize(std::size_t(request.perplexityTokens));
                inputs.context = std::min<std::uint32_t>(
                    512, std::uint32_t(std::max<std::size_t>(4, inputs.perplexityTokens.size())));
                if (model.tokenizer.addBos) inputs.bosId = tokenizer.bos();
            } else {
                emit schemeReportProgress(job, tr("No corpus installed: perplexity skipped"), -1);
            }
        }
        if (request.batteryQuestions > 0 && session.chatFormat) {
            if (auto path = batteryPath()) {
                auto battery = compute::experiments::loadFactualBattery(*path);
                if (battery.questions.size() > std::size_t(request.batteryQuestions))
                    battery.questions.resize(std::size_t(request.batteryQuestions));
                for (const auto& question : battery.questions)
                    inputs.battery.push_back(
                        {tokenizer.encode(models::formatChat(*session.chatFormat,
                                                             {{"user", question.question}}, true),
                                          true, true),
                         question.accepted});
                inputs.maxNewTokens = battery.maxNewTokens;
                inputs.agreementTokens = 12 * request.batteryQuestions;
            }
        }
        inputs.stopTokens = tokenizer.stopTokens();
        inputs.decode = [&](std::span<const std::int32_t> ids) {
            return tokenizer.decode(ids, true);
        };
        // Steps: the agreement reference, then per scheme perplexity, one battery pass per
        // penalty, agreement.
        const int perScheme = (inputs.perplexityTokens.empty() ? 0 : 1) +
                              (inputs.battery.empty() ? 0 : int(inputs.repeatPenalties.size()) + 1);
        const int total =
            std::max(1, int(schemes.size()) * perScheme + (inputs.battery.empty() ? 0 : 1));
        int done = 0;
        inputs.progress = [&](const std::string& line) {
            ++done;
            emit schemeReportProgress(job, QString::fromStdString(line),
                                      std::min(99, 100 * done / total));
            if (cancel && cancel->load()) throw ReportCancelled{}; // unwinds out of the report
        };
        auto* vulkan = dynamic_cast<compute::VulkanBackend*>(session.backend.get());
        std::optional<compute::EngineOptions> engineOptions;
        if (vulkan) {
            engineOptions = vulkan->engine().options();
            engineOptions->probes = {}; // measurements, not profiles
        }
        const auto config = model.config;
        emit schemeReportProgress(job, tr("Measuring %1 schemes…").arg(schemes.size()), 0);
        *tables = compute::experiments::qualityReport(
            model.weights, inputs,
            [&](models::ReferenceWeights weights) -> std::unique_ptr<compute::DecoderBackend> {
                if (engineOptions) { // the same device and format the window generates with
                    auto engine =
                        std::make_shared<compute::Engine>(config, weights, *engineOptions);
                    return std::make_unique<compute::VulkanBackend>(std::move(engine));
                }
                auto reference = std::make_shared<const models::ReferenceTransformer>(
                    config, std::move(weights));
                return std::make_unique<compute::CpuBackend>(reference, true);
            });
        emit schemeReportProgress(job, tr("Done"), 100);
        emit schemeReportFinished(job, true, tables);
    } catch (const ReportCancelled&) {
        emit schemeReportFailed(job, "cancelled");
    } catch (const std::exception& error) {
        emit schemeReportFailed(job, describe(error));
    }
}

} // namespace inferscope::gui
