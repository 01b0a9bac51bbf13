// JobControls, the run/cancel/progress part of every panel with a job of its own, on a real job
// runner (LabJobs on its worker thread): run waits while another job runs and, for a job that
// needs one, until a model is loaded; while its own job runs only cancel is enabled and that
// job's progress shows (no other job's); cancel drops the job at once and says so; a finished
// job says so too and frees the buttons.
#include "widgets/JobControls.hpp"
#include "widgets/LabJobs.hpp"

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QWidget>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <thread>

using namespace inferscope;
using namespace inferscope::widgets;

namespace {
// A job body that holds the worker until released (or cancelled), after one progress line.
LabJobs::Body heldJob(std::atomic<bool>& release, const char* stage) {
    return [&release, stage](LabJobs::Job& job) {
        job.control.report(stage, 33);
        while (!release.load() && !job.control.cancelled())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
}
} // namespace

class JobControlsTest : public QObject {
    Q_OBJECT
private slots:
    void runWaitsForAModelAndForOtherJobs() {
        LabJobs jobs;
        QWidget panel;
        JobControls needsModel(&panel, "demo", "Run demo");
        JobControls noModel(&panel, "head", "Time one head", false);
        QCOMPARE(needsModel.runButton()->objectName(), QString("demoRun"));
        QCOMPARE(needsModel.cancelButton()->objectName(), QString("demoCancel"));
        QCOMPARE(needsModel.progressLabel()->objectName(), QString("demoProgress"));
        needsModel.attach(jobs);
        noModel.attach(jobs);
        QVERIFY(!needsModel.runButton()->isEnabled()); // no model loaded yet
        QVERIFY(noModel.runButton()->isEnabled());
        QCOMPARE(needsModel.run([](LabJobs& runner) { return runner.start("demo", {}); }),
                 quint64(0));

        std::atomic<bool> release{false};
        jobs.start("other", heldJob(release, "someone else's job"));
        QVERIFY(jobs.busy());
        QVERIFY(!noModel.runButton()->isEnabled()); // one job at a time
        QVERIFY(!noModel.cancelButton()->isEnabled());
        release = true;
        QTRY_VERIFY(noModel.runButton()->isEnabled());
        QVERIFY(noModel.progressLabel()->text().isEmpty()); // not its job's progress
    }

    void progressEstimatesTheTimeLeft() {
        // The rule: the time so far over the share done, once the job has run a while.
        QCOMPARE(JobControls::progressText("B = 4", 50, 1000), QString("B = 4"));
        QCOMPARE(JobControls::progressText("B = 4", 50, 10000), QString("B = 4 · about 10 s left"));
        QCOMPARE(JobControls::progressText("B = 4", 25, 60000),
                 QString("B = 4 · about 3 min left"));
        QCOMPARE(JobControls::progressText("B = 4", 2, 60000), QString("B = 4"));
        QCOMPARE(JobControls::progressText("Done", 100, 60000), QString("Done"));
        // A lab that estimates for itself keeps its line: no second estimate beside it.
        QCOMPARE(JobControls::progressText("Scheme 3 of 10: fp16, about 5.8 min left", 20, 60000),
                 QString("Scheme 3 of 10: fp16, about 5.8 min left"));
        // On a real job: a line sent after the first two seconds carries the estimate.
        LabJobs jobs;
        QWidget panel;
        JobControls controls(&panel, "demo", "Run demo", false);
        controls.attach(jobs);
        std::atomic<bool> release{false};
        controls.run([&](LabJobs& runner) {
            return runner.start("demo", [&release](LabJobs::Job& job) {
                job.control.report("warming up", 10);
                std::this_thread::sleep_for(
                    std::chrono::milliseconds(JobControls::kEstimateAfterMs + 200));
                job.control.report("halfway", 50);
                while (!release.load() && !job.control.cancelled())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            });
        });
        QTRY_VERIFY_WITH_TIMEOUT(controls.progressLabel()->text().startsWith("halfway · about "),
                                 10000);
        QVERIFY(controls.progressLabel()->text().endsWith(" s left"));
        release = true;
        QTRY_VERIFY(!controls.running());
    }

    void ownJobShowsItsProgressAndCancels() {
        LabJobs jobs;
        QWidget panel;
        JobControls controls(&panel, "demo", "Run demo", false);
        controls.attach(jobs);
        QSignalSpy ended(&controls, &JobControls::ended);
        std::atomic<bool> release{false};
        const auto job = controls.run(
            [&](LabJobs& runner) { return runner.start("demo", heldJob(release, "step 1 of 3")); });
        QVERIFY(job != 0);
        QVERIFY(controls.running());
        QVERIFY(!controls.runButton()->isEnabled());
        QVERIFY(controls.cancelButton()->isEnabled());
        QTRY_COMPARE(controls.progressLabel()->text(), QString("step 1 of 3"));
        emit jobs.jobProgress(job + 100, "other", "not mine", 50);
        QCOMPARE(controls.progressLabel()->text(), QString("step 1 of 3"));

        controls.cancelButton()->click();
        QCOMPARE(ended.count(), 1); // at once: a dropped job sends nothing more
        QCOMPARE(ended.at(0).at(0).toBool(), false);
        QCOMPARE(ended.at(0).at(1).toString(), QString("cancelled"));
        QVERIFY(!controls.running());
        QVERIFY(controls.progressLabel()->text().isEmpty());
        QVERIFY(controls.runButton()->isEnabled());

        release = true;
        ended.clear();
        QVERIFY(controls.run([&](LabJobs& runner) {
            return runner.start("demo", heldJob(release, "done at once"));
        }) != 0);
        QTRY_COMPARE(ended.count(), 1);
        QCOMPARE(ended.at(0).at(0).toBool(), true);
        QVERIFY(controls.runButton()->isEnabled());
        QVERIFY(!controls.cancelButton()->isEnabled());
    }
};

QTEST_MAIN(JobControlsTest)
#include "test_job_controls.moc"
