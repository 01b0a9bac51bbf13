#pragma once
// The worker that owns the model and the backend, on its own thread. The window asks it
// for jobs (load a model, generate) through queued calls; it answers with queued signals
// that carry the job id and immutable records, so the window can drop answers to a job it
// no longer waits for. The backend is the one the window's selector chose (the Vulkan
// Engine on a device, or the CPU reference), unless a factory is injected (tests).
#include "compute/DecoderBackend.hpp"
#include "compute/Generation.hpp"
#include "models/LoadedModel.hpp"
#include "models/ReferenceTransformer.hpp"
#include "widgets/RunRecords.hpp"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <functional>
#include <memory>

namespace inferscope::gui {

using CancelFlag = std::shared_ptr<std::atomic<bool>>;

// A load job's fate, decided once: either the window cancels it or the worker commits the
// new model, never both, so the window always knows which model the worker holds.
class LoadTicket {
public:
    bool cancel() { return decide(kCancelled); } // true: the load will not replace the model
    bool commit() { return decide(kCommitted); } // true: the load may replace the model
    bool cancelled() const { return state_.load() == kCancelled; }

private:
    static constexpr int kOpen = 0, kCancelled = 1, kCommitted = 2;
    bool decide(int outcome) {
        int expected = kOpen;
        return state_.compare_exchange_strong(expected, outcome) || expected == outcome;
    }
    std::atomic<int> state_{kOpen};
};
using LoadTicketPtr = std::shared_ptr<LoadTicket>;
using ResidualObserver = models::ReferenceTransformer::ResidualObserver;
// Builds the backend for a loaded model. observer, when set, wants the residual stream after
// each layer; a backend that cannot report it ignores it (the outlier panel stays empty).
using BackendFactory = std::function<std::unique_ptr<compute::DecoderBackend>(
    const models::LoadedModel& model, ResidualObserver observer)>;

// compute::CpuBackend over models::ReferenceTransformer, with the observer attached; it can
// switch between the cached and the really uncached mode (CachingSwitch).
BackendFactory cpuBackendFactory();

// A backend that can turn its KV cache off and on (for the cached vs uncached comparison).
class CachingSwitch {
public:
    virtual ~CachingSwitch() = default;
    virtual void setCached(bool cached) = 0;
    virtual bool cached() const = 0;
};

// What the window's backend selector picks.
struct BackendChoice {
    enum class Kind { Cpu, Vulkan };
    Kind kind = Kind::Cpu;
    std::uint32_t deviceIndex = 0;
    std::string weightFormat; // compute::weightFormatFromName; empty: the engine's default
    bool operator==(const BackendChoice&) const = default;
    QString key() const; // "cpu" or "vulkan:<device>", for the settings
    static BackendChoice fromKey(const QString& key);
};

struct BackendOption {
    QString label;
    BackendChoice choice;
};
// Every Vulkan device (compute::listDevices), then the CPU reference; the first is the default.
std::vector<BackendOption> availableBackends();
// The Engine + VulkanBackend on choice's device, or the CPU reference for Kind::Cpu.
BackendFactory backendFactory(const BackendChoice& choice);

struct GenerationRequest {
    std::string prompt;
    bool chat = true; // wrap the prompt in the model's chat template
    std::string systemPrompt;
    std::int32_t maxNewTokens = 64;
    models::SamplingOptions sampling;
    bool collectActivations = true; // per-dimension max |h| per layer over the prompt
    bool kernelTimings = false;     // GPU timestamps per kernel (Vulkan; serializes the work)
};

// What the quantization lab's reports run over (the schemes are WeightQuantizer names).
struct SchemeReportRequest {
    QStringList schemes;
    bool quality = false;       // false: the weight-error report
    int perplexityTokens = 256; // 0: no perplexity
    int batteryQuestions = 4;   // 0: no battery and no agreement
};
using TablesPtr = std::shared_ptr<const std::vector<compute::Table>>;

// What the window learns about a model that finished loading.
struct LoadedModelInfo {
    widgets::ModelRecordPtr card;
    QString path;
    QString displayName;
    QString backend;
    bool chatTemplate = false; // a known chat format was recognised
    std::uint32_t contextLength = 0;
};

class GenerationWorker : public QObject {
    Q_OBJECT
public:
    // An empty factory: the backend follows the choice passed to loadModel.
    explicit GenerationWorker(BackendFactory factory = {}, QObject* parent = nullptr);
    ~GenerationWorker() override;

    // Run on the worker's thread (call through QMetaObject::invokeMethod).
    // The previous model stays until the new one is ready; a failed or cancelled load keeps it.
    void loadModel(quint64 job, const QString& path, const LoadTicketPtr& ticket,
                   const BackendChoice& choice = {});
    void generate(quint64 job, const GenerationRequest& request, const CancelFlag& cancel);
    // The same prompt and `tokens` greedy tokens, cached then uncached.
    void compareCaching(quint64 job, const GenerationRequest& request, const CancelFlag& cancel);
    void schemeReport(quint64 job, const SchemeReportRequest& request, const CancelFlag& cancel);

signals:
    void loadProgress(quint64 job, const QString& stage, int percent);
    void modelLoaded(quint64 job, const inferscope::gui::LoadedModelInfo& info);
    void loadFailed(quint64 job, const QString& error);
    void loadCancelled(quint64 job);

    void generationStarted(quint64 job, int promptTokens);
    // New text (complete UTF-8 characters only) as tokens arrive.
    void textGenerated(quint64 job, const QString& text);
    // Growing copies of the run so far (at most every kProgressInterval), then the final one.
    void runProgress(quint64 job, const inferscope::widgets::RunRecordPtr& run);
    void activationsReady(quint64 job, const inferscope::widgets::ActivationRecordPtr& record);
    void generationFinished(quint64 job, const inferscope::widgets::RunRecordPtr& run,
                            const QString& text);
    void generationFailed(quint64 job, const QString& error);

    void comparisonProgress(quint64 job, const QString& stage);
    void comparisonFinished(quint64 job, const inferscope::widgets::CachingComparisonPtr& result);
    void comparisonFailed(quint64 job, const QString& error);

    void schemeReportProgress(quint64 job, const QString& line, int percent);
    void schemeReportFinished(quint64 job, bool quality, const inferscope::gui::TablesPtr& tables);
    void schemeReportFailed(quint64 job, const QString& error); // cancelled: "cancelled"

private:
    struct Session;
    std::vector<std::int32_t> promptIds(const GenerationRequest& request) const;
    BackendFactory factory_;
    std::unique_ptr<Session> session_;
};

} // namespace inferscope::gui

Q_DECLARE_METATYPE(inferscope::gui::LoadedModelInfo)
Q_DECLARE_METATYPE(inferscope::widgets::RunRecordPtr)
Q_DECLARE_METATYPE(inferscope::widgets::ActivationRecordPtr)
Q_DECLARE_METATYPE(inferscope::widgets::CachingComparisonPtr)
Q_DECLARE_METATYPE(inferscope::gui::TablesPtr)
