// SchedulerPanel's Gantt timeline over real schedules (compute/experiments/serving/Scheduler:
// the schedule is a pure function of the output lengths): one bar per request in its slot per
// policy, spanning exactly the steps it generates; a request's colour the same in both groups
// and different from the requests beside it; static padding bars hatched (a brush pattern,
// so a black-and-white print tells them apart) and none for continuous; a partial timeline
// (the steps run so far) draws the bars so far, and a run on the engine draws its timeline
// before its result; and the export like every panel's.
#include "RecordedRun.hpp"
#include "compute/experiments/serving/Scheduler.hpp"
#include "tests/PanelJobs.hpp"
#include "tests/SyntheticModels.hpp"
#include "widgets/ChartExport.hpp"
#include "widgets/GanttFigure.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/SchedulerPanel.hpp"

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <set>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;
using namespace inferscope::widgets;

namespace {
constexpr std::uint32_t kSlots = 4;

std::vector<RequestShape> shapes() {
    std::vector<RequestShape> s;
    for (auto l : skewedLengths({12, 8, 32, 140, 3})) s.push_back({5, l});
    return s;
}

// The result tables of both policies, costed by a two-point step model (no engine: the
// panel draws the schedule, not the times).
std::vector<Table> tablesOf(std::vector<Schedule>& schedules) {
    SchedulerResult result;
    result.slotCount = kSlots;
    result.shapes = shapes();
    result.costs.decode = {{1, 10.0}, {kSlots, 14.0}};
    for (auto policy : {BatchingPolicy::Static, BatchingPolicy::Continuous}) {
        PolicyResult p;
        p.policy = policy;
        p.schedule = buildSchedule(result.shapes, kSlots, policy);
        p.simulated =
            summarize(p.schedule, result.shapes, simulateStepSeconds(p.schedule, result.costs));
        p.measured = p.simulated;
        schedules.push_back(p.schedule);
        result.policies.push_back(std::move(p));
    }
    return schedulerTables(result);
}
} // namespace

class SchedulerPanelTest : public QObject {
    Q_OBJECT
private slots:
    void oneBarPerRequestPerSlot() {
        SchedulerPanel panel;
        QVERIFY(!panel.hasData());
        std::vector<Schedule> schedules;
        panel.setTables(tablesOf(schedules));
        QVERIFY(panel.hasData());
        const auto* gantt = panel.gantt();
        QCOMPARE(gantt->groups().size(), std::size_t(2));
        QCOMPARE(gantt->groups()[0].policy, QString("static"));
        QCOMPARE(gantt->groups()[1].policy, QString("continuous"));
        const auto n = shapes().size();
        std::size_t longest = 0;
        for (std::size_t g = 0; g < 2; ++g) {
            const auto& schedule = schedules[g];
            QCOMPARE(gantt->groups()[g].slotCount, int(kSlots));
            longest = std::max(longest, schedule.steps.size());
            std::map<int, int> barsOf;
            for (const auto& bar : gantt->bars()) {
                if (bar.group != int(g) || bar.padding) continue;
                ++barsOf[bar.request];
                const auto& r = schedule.requests.at(std::size_t(bar.request - 1));
                QCOMPARE(bar.slot, int(r.slot));
                QCOMPARE(bar.start, int(r.admitStep));
                QCOMPARE(bar.end, int(r.finishStep) + 1);
            }
            QCOMPARE(barsOf.size(), n);
            for (const auto& [request, bars] : barsOf) QCOMPARE(bars, 1);
        }
        QCOMPARE(gantt->steps(), int(longest)); // one step axis for both groups
        QVERIFY(gantt->stepTick(600) >= 1);
    }

    void coloursFollowRequestsAndDifferBesideEachOther() {
        SchedulerPanel panel;
        std::vector<Schedule> schedules;
        panel.setTables(tablesOf(schedules));
        const auto* gantt = panel.gantt();
        std::map<int, QColor> colourOf;
        std::vector<GanttBar> generating;
        for (const auto& bar : gantt->bars()) {
            if (bar.padding) continue;
            generating.push_back(bar);
            const QColor colour = gantt->fillOf(bar).color();
            QVERIFY(colour.isValid());
            QCOMPARE(gantt->fillOf(bar).style(), Qt::SolidPattern);
            QCOMPARE(gantt->patternOf(bar).style(), Qt::NoBrush);
            auto [at, fresh] = colourOf.try_emplace(bar.request, colour);
            QCOMPARE(at->second, colour); // the same in the static and the continuous group
        }
        // Next in a slot, or at the same time one slot away: another colour.
        int pairs = 0;
        for (const auto& a : generating)
            for (const auto& b : generating) {
                if (a.group != b.group || a.request >= b.request) continue;
                const bool touch = a.start <= b.end && b.start <= a.end;
                if (!touch || std::abs(a.slot - b.slot) > 1) continue;
                ++pairs;
                QVERIFY2(colourOf[a.request] != colourOf[b.request],
                         qPrintable(QString("requests %1 and %2").arg(a.request).arg(b.request)));
            }
        QVERIFY(pairs > 10);
    }

    void staticPaddingIsHatched() {
        SchedulerPanel panel;
        std::vector<Schedule> schedules;
        panel.setTables(tablesOf(schedules));
        const auto* gantt = panel.gantt();
        int padding = 0;
        std::set<QRgb> requestColours;
        for (const auto& bar : gantt->bars())
            if (!bar.padding) requestColours.insert(gantt->fillOf(bar).color().rgb());
        for (const auto& bar : gantt->bars()) {
            if (!bar.padding) continue;
            ++padding;
            QCOMPARE(bar.group, 0); // static only
            // It follows its request's own bar in the same slot, up to the group's end.
            const auto& r = schedules[0].requests.at(std::size_t(bar.request - 1));
            QCOMPARE(bar.slot, int(r.slot));
            QCOMPARE(bar.start, int(r.finishStep) + 1);
            QCOMPARE(bar.end, int(r.returnStep) + 1);
            // A pattern over a grey no request has: apart by pattern, not by hue alone.
            const auto pattern = gantt->patternOf(bar).style();
            QVERIFY(pattern != Qt::NoBrush && pattern != Qt::SolidPattern);
            QVERIFY(!requestColours.count(gantt->fillOf(bar).color().rgb()));
        }
        QCOMPARE(std::uint64_t(padding) > 0, schedules[0].paddingSlotSteps() > 0);
        QVERIFY(padding > 0);
        // The legend says what hatching means, with the same brush.
        bool legendHatch = false;
        for (const auto& entry : gantt->legend())
            legendHatch |= entry.pattern.style() == Qt::BDiagPattern;
        QVERIFY(legendHatch);
    }

    void partialTimelineDrawsTheStepsSoFar() {
        SchedulerPanel panel;
        std::vector<Schedule> schedules;
        tablesOf(schedules);
        const auto partial = schedulerTimelineTable({&schedules[0]}, {10});
        panel.setTables({partial});
        QVERIFY(panel.hasData());
        QCOMPARE(panel.gantt()->groups().size(), std::size_t(1));
        QCOMPARE(panel.gantt()->steps(), 10);
        for (const auto& bar : panel.gantt()->bars()) QVERIFY(bar.end <= 10);
        QVERIFY(panel.summaryText().isEmpty()); // no figures before the result
        panel.clear();
        QVERIFY(!panel.hasData());
    }

    void defaultIsTheQuickMix() {
        SchedulerPanel panel;
        const auto request = panel.request();
        QCOMPARE(request.slotCount, std::uint32_t(SchedulerPanel::kDefaultSlots));
        QVERIFY(request.mix.requests < 64);
        panel.setMix(SchedulerPanel::ChapterMix); // the chapter's mix, on request
        const auto chapter = panel.request();
        QCOMPARE(chapter.mix.requests, 64u);
        QCOMPARE(chapter.mix.longest, 231u);
        QCOMPARE(chapter.mix.total, 1874u);
    }

    // On the engine (lavapipe, a small synthetic model): the chart is drawn before the
    // result, a policy at a time at least, and the result's timeline is the last drawn.
    void fillsAsTheEngineSteps() {
        QTemporaryDir dir;
        const auto model = QString::fromStdString(
            tests::writeTwoLayerGqaModel(dir.filePath("synthetic.gguf").toStdString()));
        LabJobs jobs;
        SchedulerPanel panel;
        tests::attachPanel(jobs, panel);
        QVERIFY(tests::loadOnVulkan(jobs, model));
        struct Drawn {
            std::size_t groups;
            int steps;
            bool result;
        };
        std::vector<Drawn> drawn;
        connect(panel.gantt(), &GanttFigure::timelineChanged, this, [&] {
            drawn.push_back({panel.gantt()->groups().size(), panel.gantt()->steps(),
                             findTable(panel.dataTables(), "scheduler-policies") != nullptr});
        });
        auto request = panel.request();
        request.mix = {8, 4, 16, 60, 2};
        request.slotCount = 2;
        request.verifyRequests = 0;
        request.prefixRequests = 0;
        QSignalSpy ended(&panel, &LabPanel::jobEnded);
        QVERIFY(panel.run(request) != 0);
        QVERIFY(ended.wait(tests::scaledMs(60000)));
        QVERIFY2(ended.at(0).at(1).toBool(), qPrintable(ended.at(0).at(2).toString()));
        QVERIFY(!drawn.empty() && drawn.back().result);
        QCOMPARE(drawn.back().groups, std::size_t(2));
        // Before the result: the static run whole, alone (and maybe parts of either).
        bool staticAlone = false;
        for (const auto& d : drawn) staticAlone |= !d.result && d.groups == 1 && d.steps > 0;
        QVERIFY(staticAlone);
    }

    void exportsAtProjectorScale() {
        SchedulerPanel panel;
        panel.setPresentationScale(1.5);
        panel.resize(1200, 700);
        std::vector<Schedule> schedules;
        panel.setTables(tablesOf(schedules));
        QTemporaryDir dir;
        QString error;
        const auto files = ChartExport::exportAll(panel, QDir(dir.filePath("out")), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // A copy to look at, beside the test (build/tests/artifacts).
        QVERIFY(ChartExport::writePng(
                    panel, QDir(recorded::artifactDirectory()).filePath("panel-scheduler.png"))
                    .isEmpty());
        for (const char* name : {"scheduler.png", "scheduler.svg", "scheduler.csv",
                                 "scheduler.json", "scheduler-scheduler-timeline.csv"})
            QVERIFY2(QFile::exists(dir.filePath(QString("out/") + name)), name);
        const QImage png(dir.filePath("out/scheduler.png"));
        QVERIFY(!png.isNull() && png.width() > 300 && png.height() > 200);
        // In grey levels the padding hatch still shows: the figure holds both the hatch's
        // dark grey and the padding's light grey.
        const QImage grey = png.convertToFormat(QImage::Format_Grayscale8);
        std::set<int> levels;
        for (int y = 0; y < grey.height(); y += 2)
            for (int x = 0; x < grey.width(); x += 2) levels.insert(qGray(grey.pixel(x, y)));
        QVERIFY(levels.size() > 8);
        QFile svg(dir.filePath("out/scheduler.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("static: a group holds its slots"));
    }
};

QTEST_MAIN(SchedulerPanelTest)
#include "test_scheduler_panel.moc"
