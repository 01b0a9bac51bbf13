#pragma once
// The run and cancel buttons and the progress line of a panel whose job runs on the worker
// thread (LabJobs). The panel starts its job through run(); while it runs only cancel is
// enabled and its progress shows; run waits while any other job runs (one at a time) or, for
// a job that needs one, until a model is loaded. When the job ends the panel hears ended().
// Once a job has run a while, its progress line adds an estimate of the time left, from the
// time so far and the share done (a class can tell a minute's wait from ten seconds').
#include "widgets/LabJobs.hpp"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>
#include <functional>

class QLabel;
class QPushButton;
class QWidget;

namespace inferscope::widgets {

class JobControls : public QObject {
    Q_OBJECT
public:
    // No estimate before this much of the job has run: the first seconds say too little.
    static constexpr qint64 kEstimateAfterMs = 2000;
    // "stage · about 40 s left" from the elapsed time and the percent done (stage alone
    // before kEstimateAfterMs, below 5% or at 100%).
    static QString progressText(const QString& stage, int percent, qint64 elapsedMs);
    // Object names: <namePrefix>Run, <namePrefix>Cancel, <namePrefix>Progress.
    JobControls(QWidget* panel, const QString& namePrefix, const QString& runText,
                bool needsModel = true);
    void attach(LabJobs& jobs);
    // Starts the job `start` returns the id of, unless the runner is busy (then 0).
    quint64 run(const std::function<quint64(LabJobs&)>& start);
    // Drops the running job (its answers are discarded; ended(false, "cancelled") follows).
    void cancel();
    bool running() const { return job_ != 0; }
    quint64 job() const { return job_; }
    bool canRun() const;
    QPushButton* runButton() const { return runButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QLabel* progressLabel() const { return progress_; }
    // Another button that starts a job of this panel (enabled and disabled with run).
    void addRunButton(QPushButton* button);

signals:
    void progressed(const QString& stage, int percent);
    void ended(bool ok, const QString& error);

private:
    void update();
    void finish(quint64 job, bool ok, const QString& error);

    LabJobs* jobs_ = nullptr;
    bool needsModel_;
    quint64 job_ = 0;
    QElapsedTimer started_; // since run() started job_
    QPushButton* runButton_;
    QList<QPushButton*> moreRunButtons_;
    QPushButton* cancelButton_;
    QLabel* progress_;
};

} // namespace inferscope::widgets
