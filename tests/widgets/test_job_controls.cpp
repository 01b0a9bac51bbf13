// JobControls, the run/cancel/progress part the Batching and Scheduler panels share: only
// cancel is enabled while the job runs, the progress of the panel's own job kind is shown
// and cleared when the run ends, and the panels' buttons emit their requests.
#include "widgets/BatchingPanel.hpp"
#include "widgets/JobControls.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/SchedulerPanel.hpp"

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QWidget>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::widgets;

class JobControlsTest : public QObject {
    Q_OBJECT
private slots:
    void runningTogglesTheButtonsAndClearsTheProgress() {
        QWidget panel;
        JobControls controls(&panel, "demo", "Run demo", JobKind::BatchingSweep);
        QCOMPARE(controls.runButton()->objectName(), QString("demoRun"));
        QCOMPARE(controls.cancelButton()->objectName(), QString("demoCancel"));
        QCOMPARE(controls.progressLabel()->objectName(), QString("demoProgress"));
        QVERIFY(controls.runButton()->isEnabled());
        QVERIFY(!controls.cancelButton()->isEnabled());
        controls.setRunning(true);
        controls.setProgress("B = 4");
        QVERIFY(!controls.runButton()->isEnabled());
        QVERIFY(controls.cancelButton()->isEnabled());
        QCOMPARE(controls.progressLabel()->text(), QString("B = 4"));
        controls.setRunning(false);
        QVERIFY(controls.runButton()->isEnabled());
        QVERIFY(!controls.cancelButton()->isEnabled());
        QVERIFY(controls.progressLabel()->text().isEmpty());
    }

    void showsOnlyTheProgressOfItsOwnJobKind() {
        LabJobs jobs;
        QWidget panel;
        JobControls controls(&panel, "demo", "Run demo", JobKind::Scheduler);
        controls.subscribe(jobs);
        emit jobs.jobProgress(1, JobKind::Scheduler, "static 3/16", 20);
        QCOMPARE(controls.progressLabel()->text(), QString("static 3/16"));
        emit jobs.jobProgress(2, JobKind::BatchingSweep, "B = 8", 50);
        QCOMPARE(controls.progressLabel()->text(), QString("static 3/16"));
    }

    void panelsForwardTheirButtons() {
        BatchingPanel batching;
        QSignalSpy sweep(&batching, &BatchingPanel::sweepRequested);
        QSignalSpy batchingCancel(&batching, &BatchingPanel::cancelRequested);
        batching.runButton()->click();
        QCOMPARE(sweep.count(), 1);
        batching.setRunning(true);
        QVERIFY(!batching.runButton()->isEnabled());
        batching.cancelButton()->click();
        QCOMPARE(batchingCancel.count(), 1);

        SchedulerPanel scheduler;
        QSignalSpy schedule(&scheduler, &SchedulerPanel::scheduleRequested);
        QSignalSpy schedulerCancel(&scheduler, &SchedulerPanel::cancelRequested);
        scheduler.runButton()->click();
        QCOMPARE(schedule.count(), 1);
        scheduler.setRunning(true);
        scheduler.cancelButton()->click();
        QCOMPARE(schedulerCancel.count(), 1);
        scheduler.setRunning(false);
        QVERIFY(scheduler.runButton()->isEnabled());
    }
};

QTEST_MAIN(JobControlsTest)
#include "test_job_controls.moc"
