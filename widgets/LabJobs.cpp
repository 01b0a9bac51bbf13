#include "widgets/LabJobs.hpp"

#include "compute/HeapRelease.hpp"

#include <atomic>
#include <exception>
#include <mutex>

namespace inferscope::widgets {

namespace {
constexpr int kOpen = 0, kDropped = 1, kCommitted = 2;

void registerMetaTypes() {
    qRegisterMetaType<LoadedModelPtr>();
    qRegisterMetaType<FormatSwitchPtr>();
    qRegisterMetaType<compute::RunRecordPtr>();
    qRegisterMetaType<compute::RunDeltaPtr>();
    qRegisterMetaType<compute::ActivationRecordPtr>();
}
} // namespace

struct LabJobs::Entry {
    quint64 id = 0;
    QString kind;
    std::atomic<bool> cancel{false};
    // Decided once: dropped by the GUI thread, or committed by a load on the worker.
    std::atomic<int> fate{kOpen};
    bool dropped() const { return fate.load() == kDropped; }
};

LabJobs::LabJobs(compute::BackendFactory factory, QObject* parent)
    : QObject(parent), session_(std::make_unique<compute::LabSession>(std::move(factory))) {
    registerMetaTypes();
    handOn_.setInterval(0);
    connect(&handOn_, &QTimer::timeout, this, &LabJobs::handOnOne);
    worker_ = new QObject; // no parent: it moves to the worker thread, deleted after it ends
    worker_->moveToThread(&thread_);
    thread_.setObjectName("inferscope-lab");
    thread_.start();
}

LabJobs::~LabJobs() {
    for (auto& [id, entry] : live_) entry->cancel.store(true);
    thread_.quit();
    thread_.wait();
    delete worker_;
    session_.reset(); // its thread has ended, so it can go from here
}

quint64 LabJobs::start(const QString& kind, Body body) {
    auto entry = std::make_shared<Entry>();
    entry->id = nextJob_++;
    entry->kind = kind;
    live_[entry->id] = entry;
    emit jobStarted(entry->id, kind);
    busyMayHaveChanged();
    QMetaObject::invokeMethod(
        worker_,
        [this, entry, body = std::move(body)] {
            // On the worker thread. A job dropped before it began does nothing at all.
            if (entry->dropped()) return;
            auto post = [this, entry](const std::function<void(LabJobs&)>& emitter) {
                sendToInbox([this, entry, emitter] { deliver(entry, emitter); });
            };
            compute::JobControl control;
            control.cancel = &entry->cancel;
            control.progress = [post, entry](const std::string& stage, int percent) {
                const QString text = QString::fromStdString(stage);
                post([entry, text, percent](LabJobs& jobs) {
                    emit jobs.jobProgress(entry->id, entry->kind, text, percent);
                });
            };
            Job job{entry->id, *session_, control, post, [entry] {
                        int expected = kOpen;
                        return entry->fate.compare_exchange_strong(expected, kCommitted) ||
                               expected == kCommitted;
                    }};
            QString error;
            bool failed = false;
            try {
                body(job);
            } catch (const compute::JobCancelled&) {
                failed = true;
                error = QStringLiteral("cancelled");
            } catch (const std::exception& e) {
                failed = true;
                error = QString::fromUtf8(e.what());
            }
            compute::releaseFreedHeapMemory();    // a lab's engines and buffers are gone by now
            session_->releaseMappedWeightPages(); // pages a host lab read
            sendToInbox([this, entry, error, failed] { ended(entry, error, failed); });
        },
        Qt::QueuedConnection);
    return entry->id;
}

void LabJobs::sendToInbox(std::function<void()> answer) {
    QMetaObject::invokeMethod(
        this, [this, answer = std::move(answer)]() mutable { receive(std::move(answer)); },
        Qt::QueuedConnection);
}

void LabJobs::receive(std::function<void()> answer) {
    inbox_.push_back(std::move(answer));
    if (!handOn_.isActive()) handOn_.start();
}

void LabJobs::handOnOne() {
    if (inbox_.empty()) {
        handOn_.stop();
        return;
    }
    auto answer = std::move(inbox_.front());
    inbox_.pop_front();
    if (inbox_.empty()) handOn_.stop();
    answer(); // may start jobs, drop them, or spin an event loop: the inbox is consistent
}

void LabJobs::deliver(const std::shared_ptr<Entry>& entry,
                      const std::function<void(LabJobs&)>& emitter) {
    if (entry->dropped()) return; // a stale job: its answers belong to nobody now
    emitter(*this);
}

void LabJobs::ended(const std::shared_ptr<Entry>& entry, const QString& error, bool failed) {
    live_.erase(entry->id);
    if (entry->dropped()) return;
    if (entry->kind == kLoadJob && !failed) hasModel_ = true;
    busyMayHaveChanged();
    if (failed)
        emit jobFailed(entry->id, entry->kind, error);
    else
        emit jobFinished(entry->id, entry->kind);
}

void LabJobs::busyMayHaveChanged() {
    const bool now = busy();
    if (now == busy_) return;
    busy_ = now;
    emit busyChanged(now);
}

bool LabJobs::busy() const {
    for (const auto& [id, entry] : live_)
        if (entry->kind != kLoadJob && !entry->dropped()) return true;
    return false;
}

QStringList LabJobs::liveKinds() const {
    QStringList kinds;
    for (const auto& [id, entry] : live_)
        if (entry->kind != kLoadJob && !entry->dropped() && !kinds.contains(entry->kind))
            kinds << entry->kind;
    return kinds;
}

QString LabJobs::kindOf(quint64 job) const {
    auto found = live_.find(job);
    return found == live_.end() ? QString() : found->second->kind;
}

void LabJobs::stopAll() {
    for (auto& [id, entry] : live_) entry->cancel.store(true);
}

void LabJobs::stop(quint64 job) {
    if (auto found = live_.find(job); found != live_.end()) found->second->cancel.store(true);
}

bool LabJobs::drop(quint64 job) {
    auto found = live_.find(job);
    if (found == live_.end()) return false;
    auto entry = found->second;
    int expected = kOpen;
    if (!entry->fate.compare_exchange_strong(expected, kDropped) && expected != kDropped)
        return false; // committed: the session holds what it made
    entry->cancel.store(true);
    live_.erase(found);
    emit jobDropped(job, entry->kind);
    busyMayHaveChanged();
    return true;
}

void LabJobs::dropAll(const QString& except) {
    std::vector<quint64> ids;
    for (const auto& [id, entry] : live_)
        if (entry->kind != except) ids.push_back(id);
    for (auto id : ids) drop(id);
}

quint64 LabJobs::current(const QString& kind) const {
    for (auto it = live_.rbegin(); it != live_.rend(); ++it)
        if (it->second->kind == kind && !it->second->dropped()) return it->first;
    return 0;
}

quint64 LabJobs::load(const QString& path, const compute::BackendChoice& choice) {
    return start(kLoadJob, [path = path.toStdString(), choice](Job& job) {
        compute::LoadOptions options;
        options.choice = choice;
        auto summary = job.session.load(path, options, job.control, job.commit);
        if (!summary) throw compute::JobCancelled();
        auto record = std::make_shared<const compute::LoadedModelSummary>(std::move(*summary));
        job.post([record](LabJobs& jobs) { emit jobs.modelLoaded(record); });
    });
}

quint64 LabJobs::generate(const compute::GenerationRequest& request) {
    return start(kGenerateJob, [request](Job& job) {
        compute::GenerationEvents events;
        events.started = [&job](std::int64_t promptTokens) {
            job.post([promptTokens](LabJobs& jobs) { emit jobs.generationStarted(promptTokens); });
        };
        // Text waits in one buffer until the GUI thread takes it: however fast tokens come, a
        // busy GUI thread finds one insertion queued, not one per token.
        struct PendingText {
            std::mutex mutex;
            QString text;
        };
        auto pending = std::make_shared<PendingText>();
        events.text = [&job, pending](const std::string& text) {
            const QString piece = QString::fromStdString(text); // outside the lock
            std::lock_guard lock(pending->mutex);
            const bool queued = !pending->text.isEmpty();
            pending->text += piece;
            if (queued) return;
            job.post([pending](LabJobs& jobs) {
                QString taken;
                {
                    std::lock_guard lock(pending->mutex);
                    taken.swap(pending->text);
                }
                if (!taken.isEmpty()) emit jobs.textGenerated(taken);
            });
        };
        events.progress = [&job](compute::RunDeltaPtr delta) {
            job.post([delta](LabJobs& jobs) { emit jobs.runProgressed(delta); });
        };
        events.activations = [&job](compute::ActivationRecordPtr record) {
            job.post([record](LabJobs& jobs) { emit jobs.activationsUpdated(record); });
        };
        auto run = job.session.generate(request, events, job.control);
        job.post([run](LabJobs& jobs) { emit jobs.runFinished(run); });
    });
}

quint64 LabJobs::switchFormat(const QString& format) {
    return start(kSwitchFormatJob, [format = format.toStdString()](Job& job) {
        auto result = std::make_shared<const compute::FormatSwitch>(
            job.session.setGenerationFormat(format, job.control));
        job.post([result](LabJobs& jobs) { emit jobs.formatSwitched(result); });
    });
}

} // namespace inferscope::widgets
