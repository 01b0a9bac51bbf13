#pragma once
// The run and cancel buttons and the progress line of a panel whose job runs on the worker
// thread (LabJobs): while the job runs only cancel is enabled, and the progress of jobs of
// the panel's kind is shown (cleared when the run ends). The panel places the widgets.
#include "widgets/LabJobs.hpp"

#include <QObject>
#include <QString>

class QLabel;
class QPushButton;
class QWidget;

namespace inferscope::widgets {

class JobControls : public QObject {
    Q_OBJECT
public:
    // Object names: <namePrefix>Run, <namePrefix>Cancel, <namePrefix>Progress.
    JobControls(QWidget* panel, const QString& namePrefix, const QString& runText, JobKind kind);
    void subscribe(const LabJobs& jobs);
    void setRunning(bool running);
    void setProgress(const QString& line);
    QPushButton* runButton() const { return runButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QLabel* progressLabel() const { return progress_; }

private:
    JobKind kind_;
    QPushButton* runButton_;
    QPushButton* cancelButton_;
    QLabel* progress_;
};

} // namespace inferscope::widgets
