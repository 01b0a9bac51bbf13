#include "widgets/JobControls.hpp"

#include <QLabel>
#include <QPushButton>
#include <QWidget>

namespace inferscope::widgets {

JobControls::JobControls(QWidget* panel, const QString& namePrefix, const QString& runText,
                         JobKind kind)
    : QObject(panel), kind_(kind), runButton_(new QPushButton(runText, panel)),
      cancelButton_(new QPushButton(tr("Cancel"), panel)), progress_(new QLabel(panel)) {
    runButton_->setObjectName(namePrefix + "Run");
    cancelButton_->setObjectName(namePrefix + "Cancel");
    cancelButton_->setEnabled(false);
    progress_->setObjectName(namePrefix + "Progress");
}

void JobControls::subscribe(const LabJobs& jobs) {
    connect(&jobs, &LabJobs::jobProgress, this,
            [this](quint64, JobKind kind, const QString& stage, int) {
                if (kind == kind_) setProgress(stage);
            });
}

void JobControls::setRunning(bool running) {
    runButton_->setEnabled(!running);
    cancelButton_->setEnabled(running);
    if (!running) progress_->clear();
}

void JobControls::setProgress(const QString& line) {
    progress_->setText(line);
}

} // namespace inferscope::widgets
