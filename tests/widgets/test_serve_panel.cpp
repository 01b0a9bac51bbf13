// The window's Serve panel on a real job runner, a synthetic model on lavapipe and a real
// HTTP client on loopback: Serve on a free port, three completions from another thread, the
// per-request table, the slot timeline and the block map filled from the loop's snapshots,
// the Replay panel (a second job runner) replaying a mix file against it, Stop ending the job
// as a success, and other jobs held off while it serves.
#include "tests/PanelJobs.hpp"
#include "tests/SyntheticModels.hpp"
#include "tests/TestTime.hpp"
#include "widgets/KvBlocksPanel.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/PanelContext.hpp"
#include "widgets/ReplayPanel.hpp"
#include "widgets/ServePanel.hpp"
#include "widgets/TableModel.hpp"

#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <httplib.h>
#include <thread>

using namespace inferscope;
using namespace inferscope::widgets;

namespace {
int portOf(const QString& url) {
    return url.section(':', -1).section('/', 0, 0).toInt();
}
} // namespace

class ServePanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = QString::fromStdString(
            tests::writeTwoLayerGqaModel(dir_.filePath("synthetic.gguf").toStdString()));
    }

    void servesRequestsLiveAndStops() {
        LabJobs jobs;
        ServePanel panel;
        tests::attachPanel(jobs, panel);
        QVERIFY(tests::loadOnVulkan(jobs, model_));

        panel.setPort(0);
        QSignalSpy ended(&panel, &LabPanel::jobEnded);
        QVERIFY(panel.serve() != 0);
        QVERIFY(panel.serving());
        QTRY_VERIFY_WITH_TIMEOUT(!panel.url().isEmpty(), tests::scaledMs(30000));
        QVERIFY2(panel.url().startsWith("http://127.0.0.1:"), qPrintable(panel.url()));
        const int port = portOf(panel.url());
        QVERIFY(port > 0);
        // The engine is the server's while it serves: the runner is busy, so every panel's
        // run button waits (a job started anyway queues behind the server on the worker).
        QVERIFY(jobs.busy());

        std::atomic<int> answered{0};
        std::thread client([port, &answered] {
            httplib::Client http("127.0.0.1", port);
            http.set_read_timeout(60, 0);
            for (int i = 0; i < 3; ++i) {
                const std::string body = R"({"prompt": "one two three four five six seven",
                    "max_tokens": 6, "temperature": 0})";
                auto response = http.Post("/v1/completions", body, "application/json");
                if (response && response->status == 200) ++answered;
            }
        });
        QTRY_COMPARE_WITH_TIMEOUT(answered.load(), 3, tests::scaledMs(60000));
        client.join();

        // The table follows the loop: three finished rows with their figures; the blocks
        // they held are free again (only held prefixes may remain, none of them running).
        auto finishedRows = [&panel] {
            const auto& table = panel.requestsModel()->table();
            int finished = 0;
            for (std::size_t row = 0; row < table.rows.size(); ++row)
                if (std::get<std::string>(table.at(row, "state")) == "finished") ++finished;
            return finished;
        };
        QTRY_COMPARE_WITH_TIMEOUT(finishedRows(), 3, tests::scaledMs(10000));
        const auto& table = panel.requestsModel()->table();
        for (std::size_t row = 0; row < table.rows.size(); ++row) {
            QCOMPARE(table.number(row, "generated"), 6.0);
            QVERIFY(table.number(row, "TTFT") > 0);
        }
        // A later request forks the first one's full prompt blocks.
        double shared = 0;
        for (std::size_t row = 0; row < table.rows.size(); ++row)
            shared += table.number(row, "shared prefix");
        QVERIFY2(shared > 0, "no request shared the identical prompt's blocks");
        int timelinePoints = 0;
        for (int c = 0; c < ServePanel::kRequestColours; ++c)
            timelinePoints += int(panel.seriesPoints(c).size());
        QVERIFY(timelinePoints > 0);
        QVERIFY(panel.blockMap()->hasData());
        QVERIFY(panel.summaryText().contains(panel.url()));

        // The Replay panel, on a job runner of its own, replays a mix file against it.
        {
            QFile mix(dir_.filePath("mix.json"));
            QVERIFY(mix.open(QIODevice::WriteOnly));
            mix.write(R"({"requests": [{"prompt": "a b c", "tokens": 3},
                {"prompt": "d e f g", "tokens": 5}, {"prompt": "h i", "tokens": 2},
                {"prompt": "j k l m n", "tokens": 4}, {"prompt": "o p", "tokens": 6},
                {"prompt": "q r s t", "tokens": 3}]})");
        }
        LabJobs replayJobs;
        ReplayPanel replay;
        tests::attachPanel(replayJobs, replay);
        auto replayRequest = replay.request();
        replayRequest.replay.url = panel.url().toStdString();
        replayRequest.replay.concurrency = 3;
        replayRequest.mixName = dir_.filePath("mix.json").toStdString();
        QSignalSpy replayEnded(&replay, &LabPanel::jobEnded);
        QVERIFY(replay.run(replayRequest) != 0);
        QTRY_COMPARE_WITH_TIMEOUT(replayEnded.count(), 1, tests::scaledMs(60000));
        QVERIFY2(replayEnded.front().at(1).toBool(),
                 qPrintable(replayEnded.front().at(2).toString()));
        QCOMPARE(replay.seriesPoints(ReplayPanel::Done).size(), 6);
        QCOMPARE(replay.seriesPoints(ReplayPanel::Failed).size(), 0);
        for (int i = 0; i < 6; ++i) // the last token after the first, after sending
            QVERIFY(replay.seriesPoints(ReplayPanel::Done)[i].x() >=
                    replay.seriesPoints(ReplayPanel::FirstToken)[i].x());
        const auto replayTables = replay.dataTables();
        QCOMPARE(replayTables.size(), std::size_t(3));
        QCOMPARE(replayTables[2].rows.size(), std::size_t(6));
        QTRY_VERIFY_WITH_TIMEOUT(finishedRows() >= 9, tests::scaledMs(10000));

        panel.stop();
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, tests::scaledMs(30000));
        QVERIFY2(ended.front().at(1).toBool(), qPrintable(ended.front().at(2).toString()));
        QVERIFY(!panel.serving());
        QVERIFY(!panel.dataTables().empty());
        // The runner takes other jobs, and the server closes its address when the job sees
        // the stop (within its snapshot interval).
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.busy(), tests::scaledMs(10000));
        auto healthAnswers = [port] {
            httplib::Client after("127.0.0.1", port);
            after.set_connection_timeout(1, 0);
            return bool(after.Get("/health"));
        };
        QTRY_VERIFY_WITH_TIMEOUT(!healthAnswers(), tests::scaledMs(10000));
    }

    void refusesAnOpenHostWithoutKey() {
        LabJobs jobs;
        ServePanel panel;
        tests::attachPanel(jobs, panel);
        QVERIFY(tests::loadOnVulkan(jobs, model_));
        auto hostEdit = panel.findChild<QLineEdit*>("serveHost");
        QVERIFY(hostEdit);
        hostEdit->setText("0.0.0.0");
        QSignalSpy ended(&panel, &LabPanel::jobEnded);
        QVERIFY(panel.serve() != 0);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, tests::scaledMs(30000));
        QVERIFY(!ended.front().at(1).toBool());
        QVERIFY2(ended.front().at(2).toString().contains("API key"),
                 qPrintable(ended.front().at(2).toString()));
    }

private:
    QTemporaryDir dir_;
    QString model_;
};

QTEST_MAIN(ServePanelTest)
#include "test_serve_panel.moc"
