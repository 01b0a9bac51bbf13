#pragma once
// The Qt adapter over compute::LabSession: one generic job runner on a worker thread that owns
// the session. Every job kind (load, generate, cached vs uncached, the scheme reports, a
// format switch) is a body run there with a JobControl; it answers with immutable records,
// emitted here as queued signals on the GUI thread. Panels subscribe to these signals
// themselves; the window only starts, stops and drops jobs.
//
// A job has an id, progress, a cancel flag, a result (the records it published) and maybe a
// failure. Dropping a job makes it stale: it is cancelled and nothing it still sends is
// emitted (a load past its commit point can no longer be dropped: the session already holds
// its model). Jobs run one after another in the order they were started, so a result never
// depends on how fast another job ran.
//
// What the worker sends waits in an inbox on the GUI thread and is handed on one item per
// turn of the event loop: a burst (the activations, a run update and the text after a prefill)
// never runs as one long stretch, so input, layout and painting get their turn between panels.
#include "compute/session/LabSession.hpp"
#include "compute/session/RunRecords.hpp"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <deque>
#include <functional>
#include <map>
#include <memory>

namespace inferscope::widgets {

using TablesPtr = std::shared_ptr<const std::vector<compute::Table>>;
using LoadedModelPtr = std::shared_ptr<const compute::LoadedModelSummary>;
using FormatSwitchPtr = std::shared_ptr<const compute::FormatSwitch>;

enum class JobKind {
    Load,
    Generate,
    CompareCaching,
    WeightReport,
    QualityReport,
    SwitchFormat,
    AttentionHead,
    SoftLabels,
    BatchingSweep,
    Scheduler,
    Speculative
};

class LabJobs : public QObject {
    Q_OBJECT
public:
    // An empty factory: the backend follows the choice of each load; a given one (tests) wins.
    explicit LabJobs(compute::BackendFactory factory = {}, QObject* parent = nullptr);
    ~LabJobs() override; // cancels every job and waits for the worker thread

    // What a job body sees on the worker thread.
    class Job {
    public:
        compute::LabSession& session;
        const compute::JobControl& control;
        // Publishing: each becomes the matching signal on the GUI thread, unless dropped.
        std::function<void(const std::function<void(LabJobs&)>&)> post;
        // The load's commit point: false when the job was dropped first.
        std::function<bool()> commit;
    };
    using Body = std::function<void(Job& job)>;

    // Starts a job of `kind` (queued behind running ones); returns its id (never 0).
    quint64 start(JobKind kind, Body body);
    // Asks a job to end early; its answers (a run marked cancelled) still arrive.
    void stop(quint64 job);
    // Stops a job and drops every answer it still sends. False when it can no longer be
    // dropped (a load that already replaced the model) or is not running.
    bool drop(quint64 job);
    void dropAll(JobKind except);
    // The live (started, not ended, not dropped) job of a kind; 0 when none.
    quint64 current(JobKind kind) const;
    bool running(JobKind kind) const { return current(kind) != 0; }

    // The lab's jobs, each one body over the session.
    quint64 load(const QString& path, const compute::BackendChoice& choice);
    quint64 generate(const compute::GenerationRequest& request);
    quint64 compareCaching(const compute::GenerationRequest& request);
    quint64 weightReport(const std::vector<models::QuantSchemeSpec>& schemes);
    quint64 qualityReport(const compute::QualityRequest& request);
    quint64 switchFormat(const QString& format);
    quint64 attentionHead(const compute::experiments::AttentionHeadOptions& options);
    quint64 softLabels(const compute::SoftLabelRequest& request);
    quint64 batchingSweep(const compute::BatchingRequest& request);
    quint64 schedulerComparison(const compute::SchedulingRequest& request);
    quint64 speculative(const compute::SpeculativeRequest& request);

signals:
    void jobProgress(quint64 job, inferscope::widgets::JobKind kind, const QString& stage,
                     int percent);
    void jobFinished(quint64 job, inferscope::widgets::JobKind kind);
    // error "cancelled": the job saw its cancel flag and stopped without a result.
    void jobFailed(quint64 job, inferscope::widgets::JobKind kind, const QString& error);

    // The records (immutable), from live jobs only.
    void modelLoaded(const inferscope::widgets::LoadedModelPtr& model);
    void generationStarted(qint64 promptTokens);
    void textGenerated(const QString& text);
    void runUpdated(const inferscope::compute::RunRecordPtr& run); // growing, then final
    void activationsUpdated(const inferscope::compute::ActivationRecordPtr& record);
    void comparisonReady(const inferscope::compute::CachingComparisonPtr& comparison);
    void weightReportReady(const inferscope::widgets::TablesPtr& tables);
    void qualityReportReady(const inferscope::widgets::TablesPtr& tables);
    void formatSwitched(const inferscope::widgets::FormatSwitchPtr& result);
    void attentionHeadReady(const inferscope::widgets::TablesPtr& tables);
    void softLabelsReady(const inferscope::compute::experiments::NextTokenDistributionPtr& labels);
    void batchingReady(const inferscope::widgets::TablesPtr& tables);
    void schedulerReady(const inferscope::widgets::TablesPtr& tables);
    void speculativeReady(const inferscope::compute::experiments::SpeculativeStudyPtr& study);

private:
    struct Entry;
    void deliver(const std::shared_ptr<Entry>& entry, const std::function<void(LabJobs&)>& emitter);
    void ended(const std::shared_ptr<Entry>& entry, const QString& error, bool failed);
    // Worker thread: an answer for the GUI thread's inbox. GUI thread: receive queues it,
    // handOnOne runs the oldest.
    void sendToInbox(std::function<void()> answer);
    void receive(std::function<void()> answer);
    void handOnOne();

    QThread thread_;
    QObject* worker_ = nullptr;                      // lives on thread_
    std::unique_ptr<compute::LabSession> session_;   // touched on thread_ only
    std::map<quint64, std::shared_ptr<Entry>> live_; // GUI thread only
    quint64 nextJob_ = 1;
    std::deque<std::function<void()>> inbox_; // GUI thread only, oldest first
    QTimer handOn_;                           // a zero timer: one inbox item per turn
};

} // namespace inferscope::widgets

Q_DECLARE_METATYPE(inferscope::widgets::JobKind)
Q_DECLARE_METATYPE(inferscope::widgets::TablesPtr)
Q_DECLARE_METATYPE(inferscope::widgets::LoadedModelPtr)
Q_DECLARE_METATYPE(inferscope::widgets::FormatSwitchPtr)
Q_DECLARE_METATYPE(inferscope::compute::RunRecordPtr)
Q_DECLARE_METATYPE(inferscope::compute::ActivationRecordPtr)
Q_DECLARE_METATYPE(inferscope::compute::CachingComparisonPtr)
Q_DECLARE_METATYPE(inferscope::compute::experiments::NextTokenDistributionPtr)
Q_DECLARE_METATYPE(inferscope::compute::experiments::SpeculativeStudyPtr)
