#include "app/gui/GenerationWorker.hpp"

#include "compute/CpuBackend.hpp"
#include "compute/experiments/ModelInfo.hpp"
#include "models/ChatTemplate.hpp"
#include "models/Tokenizer.hpp"

#include <QFileInfo>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>

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
}
} // namespace

BackendFactory cpuBackendFactory() {
    return [](const models::LoadedModel& model, ResidualObserver observer) {
        auto reference = std::make_shared<models::ReferenceTransformer>(
            model.config, models::dequantizeAll(model.weights));
        if (observer) reference->setResidualObserver(std::move(observer));
        return std::make_unique<compute::CpuBackend>(std::move(reference), true);
    };
}

// Per layer, per dimension max |h| while enabled (the prompt's prefill).
struct ActivationCollector {
    bool enabled = false;
    std::vector<std::vector<float>> maxAbs;
    std::uint32_t positions = 0;

    void begin(std::uint32_t layers, std::uint32_t hidden) {
        maxAbs.assign(layers, std::vector<float>(hidden, 0.0f));
        positions = 0;
        enabled = true;
    }
    void observe(std::uint32_t layer, std::uint32_t position, std::span<const float> values) {
        if (!enabled || layer >= maxAbs.size()) return;
        auto& row = maxAbs[layer];
        for (std::size_t i = 0; i < std::min(row.size(), values.size()); ++i)
            row[i] = std::max(row[i], std::fabs(values[i]));
        positions = std::max(positions, position + 1);
    }
};

struct GenerationWorker::Session {
    std::shared_ptr<const models::LoadedModel> model;
    std::unique_ptr<models::Tokenizer> tokenizer;
    std::optional<models::ChatFormat> chatFormat;
    // Declared before the backend, which holds an observer that points at it.
    std::unique_ptr<ActivationCollector> activations = std::make_unique<ActivationCollector>();
    std::unique_ptr<compute::DecoderBackend> backend;
};

GenerationWorker::GenerationWorker(BackendFactory factory, QObject* parent)
    : QObject(parent), factory_(std::move(factory)) {
    registerMetaTypes();
}

GenerationWorker::~GenerationWorker() = default;

void GenerationWorker::loadModel(quint64 job, const QString& path, const LoadTicketPtr& ticket) {
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
        session->backend = factory_(*model, [collector](std::uint32_t layer, std::uint32_t position,
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

void GenerationWorker::generate(quint64 job, const GenerationRequest& request,
                                const CancelFlag& cancel) {
    if (!session_) {
        emit generationFailed(job, tr("No model is loaded."));
        return;
    }
    auto& session = *session_;
    try {
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
        auto promptIds = session.tokenizer->encode(text, true, true);
        if (promptIds.empty()) throw std::runtime_error("the prompt encodes to no tokens");
        const auto& config = session.model->config;
        if (config.contextLength > 0 &&
            promptIds.size() + static_cast<std::size_t>(request.maxNewTokens) >
                config.contextLength)
            throw std::runtime_error("the prompt (" + std::to_string(promptIds.size()) +
                                     " tokens) plus the tokens to generate exceed the model's "
                                     "context of " +
                                     std::to_string(config.contextLength));

        compute::GenerationOptions options;
        options.maxNewTokens = request.maxNewTokens;
        options.sampling = request.sampling;
        options.stopTokens = session.tokenizer->stopTokens();
        options.cancel = cancel.get();

        widgets::RunRecord live;
        live.backend = session.backend->name();
        live.promptTokens = static_cast<std::int64_t>(promptIds.size());
        live.config = config;
        emit generationStarted(job, static_cast<int>(promptIds.size()));

        if (request.collectActivations)
            session.activations->begin(config.layers, config.hiddenSize);
        else
            session.activations->enabled = false;

        std::vector<std::int32_t> generated;
        std::size_t emittedBytes = 0;
        auto start = Clock::now(), lastToken = start, lastProgress = start;
        auto onToken = [&](std::size_t index, std::int32_t token) {
            auto now = Clock::now();
            double seconds = std::chrono::duration<double>(now - lastToken).count();
            lastToken = now;
            if (index == 0) {
                live.prefillSeconds = seconds;
                if (session.activations->enabled) {
                    session.activations->enabled = false; // the prompt only
                    auto record = std::make_shared<widgets::ActivationRecord>();
                    record->maxAbsPerLayer = session.activations->maxAbs;
                    record->positions = session.activations->positions;
                    emit activationsReady(job, record);
                }
            } else {
                live.stepSeconds.push_back(seconds);
            }
            // The backend holds the prompt and the tokens before this one.
            live.kvSamples.push_back({live.promptTokens + static_cast<std::int64_t>(index),
                                      session.backend->kvCacheBytes()});
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
        auto result = compute::generate(*session.backend, promptIds, options, onToken);
        session.activations->enabled = false;

        // The final record takes the loop's own step timings (they exclude the sampling).
        auto record = std::make_shared<widgets::RunRecord>(live);
        record->prefillSeconds = result.prefillSeconds;
        record->stepSeconds = result.stepSeconds;
        record->generatedTokens = static_cast<std::int64_t>(result.generatedIds.size());
        record->kvSamples.push_back(
            {static_cast<std::int64_t>(promptIds.size() + result.stepSeconds.size()),
             session.backend->kvCacheBytes()});
        std::sort(record->kvSamples.begin(), record->kvSamples.end(),
                  [](const auto& a, const auto& b) { return a.tokens < b.tokens; });
        record->kvSamples.erase(
            std::unique(record->kvSamples.begin(), record->kvSamples.end(),
                        [](const auto& a, const auto& b) { return a.tokens == b.tokens; }),
            record->kvSamples.end());
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

} // namespace inferscope::gui
