// `inferscope-cli serve` as its own process on the default model, on a free loopback port,
// measured by `inferscope-cli replay` (in this process) over a small mix file: every request
// completes with the tokens it asked for, the server's /metrics counted them, and SIGTERM
// shuts the server down cleanly. Usage errors of both commands are refused before any work.
#include "app/cli/Commands.hpp"

#include "tests/DefaultModel.hpp"
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>

using namespace inferscope;

class SlowCliServeReplayTest : public QObject {
    Q_OBJECT

private slots:
    void usageErrorsBeforeWork() {
        std::ostringstream out, err;
        QCOMPARE(cli::runCli({"inferscope-cli", "serve", "default", "--host", "0.0.0.0"}, out, err),
                 2);
        QVERIFY(err.str().find("--api-key") != std::string::npos);
        std::ostringstream out2, err2;
        QCOMPARE(cli::runCli({"inferscope-cli", "serve", "default", "--slots", "0"}, out2, err2),
                 2);
        std::ostringstream out3, err3;
        QCOMPARE(cli::runCli({"inferscope-cli", "replay", "http://127.0.0.1:1", "--rate", "2",
                              "--concurrency", "3"},
                             out3, err3),
                 2);
        std::ostringstream out4, err4;
        QCOMPARE(cli::runCli({"inferscope-cli", "replay", "http://127.0.0.1:1", "--slo", "ttft"},
                             out4, err4),
                 2);
        QVERIFY(err4.str().find("NAME:MS") != std::string::npos);
        std::ostringstream out5, err5;
        QCOMPARE(cli::runCli({"inferscope-cli", "replay", "ftp://x"}, out5, err5), 2);
    }

    void serveThenReplay() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(model);
        QProcess server;
        server.setProcessChannelMode(QProcess::SeparateChannels);
        server.start(INFERSCOPE_CLI_EXECUTABLE,
                     {"serve", QString::fromStdString(model.string()), "--port", "0", "--slots",
                      "4", "--context", "256", "--name", "smol", "--batch-invariant"});
        QVERIFY(server.waitForStarted());
        QString banner;
        QTRY_VERIFY_WITH_TIMEOUT((banner += server.readAllStandardOutput()).contains("\n"), 240000);
        const std::string text = banner.toStdString();
        std::smatch match;
        QVERIFY2(std::regex_search(text, match, std::regex(R"(on (http://127\.0\.0\.1:\d+))")),
                 text.c_str());
        const std::string url = match[1];

        QTemporaryDir dir;
        const auto mixPath = dir.filePath("mix.json").toStdString();
        std::ofstream(mixPath) << R"({"requests": [
            {"prompt": "Tell me about the sea.", "tokens": 6},
            {"prompt": "Name three fruits.", "tokens": 3},
            {"prompt": "Why is the sky blue?", "tokens": 9},
            {"prompt": "Write a haiku about rain.", "tokens": 5},
            {"prompt": "Count to five.", "tokens": 4},
            {"prompt": "What is bread made of?", "tokens": 7}]})";
        const auto csvPath = dir.filePath("requests.csv").toStdString();
        std::ostringstream out, err;
        const int status =
            cli::runCli({"inferscope-cli", "replay", url, "--mix", mixPath, "--concurrency", "3",
                         "--slo", "ttft:60000,tpot:60000", "--csv", csvPath, "--json"},
                        out, err);
        QVERIFY2(status == 0, (out.str() + err.str()).c_str());
        const auto json = nlohmann::json::parse(out.str());
        QCOMPARE(json["requests_completed"].get<int>(), 6);
        QCOMPARE(json["requests_failed"].get<int>(), 0);
        QCOMPARE(json["output_tokens"].get<int>(), 6 + 3 + 9 + 5 + 4 + 7);
        QVERIFY(json["output_throughput"].get<double>() > 0);
        // The server's own counter moved by exactly the tokens the client counted.
        bool counted = false;
        for (const auto& table : json["tables"])
            if (table["id"] == "replay-server-metrics")
                for (const auto& row : table["rows"])
                    if (row[0].get<std::string>().rfind("inferscope_generation_tokens_total", 0) ==
                        0) {
                        QCOMPARE(row[3].get<double>(), 34.0);
                        counted = true;
                    }
        QVERIFY2(counted, out.str().c_str());
        std::ifstream csv(csvPath);
        int lines = 0;
        for (std::string line; std::getline(csv, line);) ++lines;
        QCOMPARE(lines, 7);

        ::kill(pid_t(server.processId()), SIGTERM);
        QVERIFY(server.waitForFinished(60000));
        QCOMPARE(server.exitStatus(), QProcess::NormalExit);
        QCOMPARE(server.exitCode(), 0);
        const QByteArray served = server.readAllStandardOutput();
        QVERIFY(served.contains("served 6 requests, 34 tokens"));
        // The window's Serve tables, from the same functions: six finished requests.
        QVERIFY(served.contains("Requests served") && served.contains("Server metrics"));
        QCOMPARE(served.count(" finished "), 6);
        QVERIFY(served.contains("batch-invariant") && served.contains("yes"));
        QVERIFY(served.contains("so a greedy answer equals the request served alone"));
    }
};

QTEST_GUILESS_MAIN(SlowCliServeReplayTest)
#include "test_slow_cli_serve_replay.moc"
