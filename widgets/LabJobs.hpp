#pragma once
// The Qt adapter over compute::LabSession: one generic job runner on a worker thread that owns
// the session. A job is a body run there with a JobControl; it answers with immutable records,
// handed to the GUI thread. The session's own jobs (load, generate, a format switch) answer
// through the signals below; an experiment (compute/experiments/*) runs through runLab<Lab>,
// typed by its Result, and its answer goes to the panel that asked. Panels subscribe and start
// their own jobs; the window never names a lab.
//
// A job has an id, a kind (the lab's id, or "load", "generate", "switch-format"), progress, a
// cancel flag, a result and maybe a failure. Dropping a job makes it stale: it is cancelled,
// jobDropped says so at once, and nothing it still sends is emitted (a load past its commit
// point can no longer be dropped: the session already holds its model). Jobs run one after
// another in the order they were started, so a result never depends on how fast another ran.
//
// What the worker sends waits in an inbox on the GUI thread and is handed on one item per
// turn of the event loop: a burst (the activations, a run update and the text after a prefill)
// never runs as one long stretch, so input, layout and painting get their turn between panels.
#include "compute/lab/RunRecords.hpp"
#include "compute/session/LabSession.hpp"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <deque>
#include <functional>
#include <map>
#include <memory>

namespace inferscope::widgets {

using LoadedModelPtr = std::shared_ptr<const compute::LoadedModelSummary>;
using FormatSwitchPtr = std::shared_ptr<const compute::FormatSwitch>;

// The kinds of the session's own jobs (a lab's kind is its id).
inline const QString kLoadJob = QStringLiteral("load");
inline const QString kGenerateJob = QStringLiteral("generate");
inline const QString kSwitchFormatJob = QStringLiteral("switch-format");

class LabJobs : public QObject {
    Q_OBJECT
public:
    // An empty factory: the backend follows the choice of each load; a given one (tests) wins.
    explicit LabJobs(compute::BackendFactory factory = {}, QObject* parent = nullptr);
    ~LabJobs() override; // cancels every job and waits for the worker thread

    // What a job body sees on the worker thread.
    class Job {
    public:
        quint64 id;
        compute::LabSession& session;
        const compute::JobControl& control;
        // Publishing: runs on the GUI thread, unless the job was dropped first.
        std::function<void(const std::function<void(LabJobs&)>&)> post;
        // The load's commit point: false when the job was dropped first.
        std::function<bool()> commit;
    };
    using Body = std::function<void(Job& job)>;

    // Starts a job of `kind` (queued behind running ones); returns its id (never 0).
    quint64 start(const QString& kind, Body body);
    // Asks a job to end early; its answers (a run marked cancelled) still arrive.
    void stop(quint64 job);
    void stopAll();
    // Stops a job and drops every answer it still sends (jobDropped says so). False when it
    // can no longer be dropped (a load that already replaced the model) or is not running.
    bool drop(quint64 job);
    void dropAll(const QString& exceptKind);
    // The live (started, not ended, not dropped) job of a kind; 0 when none.
    quint64 current(const QString& kind) const;
    bool running(const QString& kind) const { return current(kind) != 0; }
    QString kindOf(quint64 job) const; // empty when not live
    QStringList liveKinds() const;     // the kinds of the live jobs other than a load
    // A job other than a load is live: one job at a time, so the window's buttons wait.
    bool busy() const;
    // A model finished loading (the session holds one).
    bool hasModel() const { return hasModel_; }

    // An experiment: Lab::run(session, request, control) on the worker thread. Its result is
    // announced on the GUI thread (labResult) to every listener of that lab, unless the job was
    // dropped first.
    template <class Lab> quint64 runLab(const typename Lab::Request& request) {
        const QString kind = labKind<Lab>();
        return start(kind, [request, kind](Job& job) {
            std::shared_ptr<const void> result = std::make_shared<const typename Lab::Result>(
                Lab::run(job.session, request, job.control));
            const quint64 id = job.id;
            job.post([id, kind, result](LabJobs& jobs) { emit jobs.labResult(id, kind, result); });
        });
    }
    // Calls onResult with each result of Lab while `receiver` lives (typed by the lab).
    template <class Lab>
    void listen(QObject* receiver, std::function<void(const typename Lab::Result&)> onResult) {
        const QString kind = labKind<Lab>();
        connect(this, &LabJobs::labResult, receiver,
                [kind, onResult = std::move(onResult)](quint64, const QString& resultKind,
                                                       const std::shared_ptr<const void>& result) {
                    if (resultKind == kind)
                        onResult(*std::static_pointer_cast<const typename Lab::Result>(result));
                });
    }
    template <class Lab> static QString labKind() {
        return QString::fromUtf8(Lab::id.data(), qsizetype(Lab::id.size()));
    }

    // The session's own jobs.
    quint64 load(const QString& path, const compute::BackendChoice& choice);
    quint64 generate(const compute::GenerationRequest& request);
    quint64 switchFormat(const QString& format);

signals:
    void jobStarted(quint64 job, const QString& kind);
    void jobProgress(quint64 job, const QString& kind, const QString& stage, int percent);
    void jobFinished(quint64 job, const QString& kind);
    // error "cancelled": the job saw its cancel flag and stopped without a result.
    void jobFailed(quint64 job, const QString& kind, const QString& error);
    void jobDropped(quint64 job, const QString& kind);
    // An experiment's result (runLab), typed by its kind; listen<Lab> receives it typed.
    void labResult(quint64 job, const QString& kind, const std::shared_ptr<const void>& result);
    void busyChanged(bool busy);

    // The session's records (immutable), from live jobs only.
    void modelLoaded(const inferscope::widgets::LoadedModelPtr& model);
    void generationStarted(qint64 promptTokens);
    void textGenerated(const QString& text);
    // A running generation: what changed since the last delta; then its final record.
    void runProgressed(const inferscope::compute::RunDeltaPtr& delta);
    void runFinished(const inferscope::compute::RunRecordPtr& run);
    void activationsUpdated(const inferscope::compute::ActivationRecordPtr& record);
    void formatSwitched(const inferscope::widgets::FormatSwitchPtr& result);

private:
    struct Entry;
    void deliver(const std::shared_ptr<Entry>& entry, const std::function<void(LabJobs&)>& emitter);
    void ended(const std::shared_ptr<Entry>& entry, const QString& error, bool failed);
    void busyMayHaveChanged();
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
    bool hasModel_ = false;
    bool busy_ = false;
    std::deque<std::function<void()>> inbox_; // GUI thread only, oldest first
    QTimer handOn_;                           // a zero timer: one inbox item per turn
};

} // namespace inferscope::widgets

Q_DECLARE_METATYPE(inferscope::widgets::LoadedModelPtr)
Q_DECLARE_METATYPE(inferscope::widgets::FormatSwitchPtr)
Q_DECLARE_METATYPE(inferscope::compute::RunRecordPtr)
Q_DECLARE_METATYPE(inferscope::compute::RunDeltaPtr)
Q_DECLARE_METATYPE(inferscope::compute::ActivationRecordPtr)
