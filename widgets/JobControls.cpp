#include "widgets/JobControls.hpp"

#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QWidget>
#include <algorithm>
#include <cmath>

namespace inferscope::widgets {

JobControls::JobControls(QWidget* panel, const QString& namePrefix, const QString& runText,
                         bool needsModel)
    : QObject(panel), needsModel_(needsModel), runButton_(new QPushButton(runText, panel)),
      cancelButton_(new QPushButton(tr("Cancel"), panel)), progress_(new QLabel(panel)) {
    runButton_->setObjectName(namePrefix + "Run");
    cancelButton_->setObjectName(namePrefix + "Cancel");
    progress_->setObjectName(namePrefix + "Progress");
    // A long stage line wraps within the panel's width; it never widens the window.
    progress_->setWordWrap(true);
    progress_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    runButton_->setEnabled(false);
    cancelButton_->setEnabled(false);
    connect(cancelButton_, &QPushButton::clicked, this, &JobControls::cancel);
}

void JobControls::attach(LabJobs& jobs) {
    jobs_ = &jobs;
    connect(&jobs, &LabJobs::jobProgress, this,
            [this](quint64 job, const QString&, const QString& stage, int percent) {
                if (job != job_) return;
                progress_->setText(progressText(stage, percent, started_.elapsed()));
                emit progressed(stage, percent);
            });
    connect(&jobs, &LabJobs::jobFinished, this,
            [this](quint64 job, const QString&) { finish(job, true, {}); });
    connect(
        &jobs, &LabJobs::jobFailed, this,
        [this](quint64 job, const QString&, const QString& error) { finish(job, false, error); });
    connect(&jobs, &LabJobs::jobDropped, this, [this](quint64 job, const QString&) {
        finish(job, false, QStringLiteral("cancelled"));
    });
    // Loads start and end, other panels' jobs come and go: the run button follows.
    connect(&jobs, &LabJobs::busyChanged, this, &JobControls::update);
    connect(&jobs, &LabJobs::jobStarted, this, &JobControls::update);
    connect(&jobs, &LabJobs::modelLoaded, this, &JobControls::update);
    update();
}

bool JobControls::canRun() const {
    return jobs_ && !jobs_->busy() && !jobs_->running(kLoadJob) &&
           (!needsModel_ || jobs_->hasModel());
}

quint64 JobControls::run(const std::function<quint64(LabJobs&)>& start) {
    if (!canRun()) return 0;
    job_ = start(*jobs_);
    started_.start();
    update();
    return job_;
}

QString JobControls::progressText(const QString& stage, int percent, qint64 elapsedMs) {
    if (elapsedMs < kEstimateAfterMs || percent < 5 || percent >= 100) return stage;
    // The quality report and the class report estimate from their own units of work (schemes,
    // weighted items) and say so in the stage: one estimate per line, theirs.
    static const QRegularExpression ownEstimate(QStringLiteral("\\babout [^·]+ left\\b"));
    if (stage.contains(ownEstimate)) return stage;
    // Linear in the share done: the labs report their stages by the work they hold.
    const double left = elapsedMs / 1000.0 * (100 - percent) / percent;
    const QString time = left < 90 ? tr("%1 s").arg(std::max(1, int(std::lround(left))))
                                   : tr("%1 min").arg(std::lround(left / 60));
    return tr("%1 · about %2 left").arg(stage, time);
}

void JobControls::cancel() {
    if (job_ && jobs_) jobs_->drop(job_); // jobDropped ends it here
}

void JobControls::finish(quint64 job, bool ok, const QString& error) {
    if (job == 0 || job != job_) {
        update();
        return;
    }
    job_ = 0;
    progress_->clear();
    update();
    emit ended(ok, error);
}

void JobControls::addRunButton(QPushButton* button) {
    moreRunButtons_ << button;
    update();
}

void JobControls::update() {
    runButton_->setEnabled(!running() && canRun());
    for (auto* button : moreRunButtons_) button->setEnabled(runButton_->isEnabled());
    cancelButton_->setEnabled(running());
}

} // namespace inferscope::widgets
