// `inferscope-cli batch` and `schedule` end to end on a synthetic GGUF file (lavapipe): the
// tables come out as JSON with the ids the panels read, and bad input (a batch of 0, a
// context over the model's, zero slots, an empty mix, a mix file that does not parse,
// lengths over the context) is one clear error with status 2.
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace inferscope;
using inferscope::tests::runCli;

namespace {

std::vector<std::string> tableIds(const nlohmann::json& doc) {
    std::vector<std::string> ids;
    for (const auto& table : doc.at("tables")) ids.push_back(table.at("id").get<std::string>());
    return ids;
}

int lines(const std::string& text) {
    return int(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

class TestCliServing : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.seed = 3;
        file_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, file_);
    }

    void batchPrintsTheSweep() {
        const auto r = runCli({"batch", file_, "--batches", "1,2,4", "--context", "8", "--steps",
                               "2", "--format", "fp32", "--json"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(tableIds(doc), (std::vector<std::string>{"batching-sweep", "batching-knee",
                                                          "batching-exactness"}));
        QCOMPARE(doc["tables"][0]["rows"].size(), std::size_t(3));
        for (const auto& row : doc["tables"][2]["rows"])
            QCOMPARE(row[3].get<std::string>(), std::string("yes"));
    }

    void batchRejectsBadInput() {
        auto r = runCli({"batch", file_, "--batches", "1,0,4"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("a batch of 0") != std::string::npos);
        QCOMPARE(lines(r.err), 1);
        r = runCli({"batch", file_, "--context", "600"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("model's context of 512") != std::string::npos);
        QCOMPARE(lines(r.err), 1);
    }

    void schedulePrintsBothPolicies() {
        const auto r = runCli({"schedule", file_, "--slots", "3", "--requests", "9", "--median",
                               "3", "--longest", "10", "--total", "40", "--verify", "2", "--format",
                               "fp32", "--json"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(tableIds(doc),
                 (std::vector<std::string>{"scheduler-policies", "scheduler-timeline",
                                           "scheduler-checks", "scheduler-costs", "kv-block-map",
                                           "kv-block-tables", "kv-block-cells", "prefix-sharing"}));
        // Static and continuous measured and simulated, chunked prefill simulated only.
        QCOMPARE(doc["tables"][0]["rows"].size(), std::size_t(5));
        QCOMPARE(doc["tables"][0]["rows"][4][1].get<std::string>(), std::string("simulated only"));
        // Snapshots of the continuous run (its peak first), then one of the prefix-sharing run.
        const auto& snapshots = doc["tables"][4]["rows"];
        QVERIFY(snapshots.size() >= 2 && snapshots.size() <= 5);
        QVERIFY(snapshots[0][0].get<std::string>().find("(peak blocks)") != std::string::npos);
        QCOMPARE(snapshots.back()[0].get<std::string>(),
                 std::string("prefix sharing, after prefill"));
        const auto& sharing = doc["tables"][7]["rows"];
        QCOMPARE(sharing.size(), std::size_t(2));
        QCOMPARE(sharing[0][6].get<std::string>(), std::string("8 of 8"));
        QVERIFY(sharing[0][4].get<std::int64_t>() < sharing[1][4].get<std::int64_t>());
        // Every generating cell of the timeline: 40 tokens per policy.
        int generating = 0;
        for (const auto& row : doc["tables"][1]["rows"])
            generating += row[4].get<std::string>() == "generating";
        QCOMPARE(generating, 80);
    }

    void scheduleOptionsForChunksAndPrefixes() {
        auto r = runCli({"schedule",       file_, "--slots",           "3",
                         "--requests",     "9",   "--median",          "3",
                         "--longest",      "10",  "--total",           "40",
                         "--verify",       "0",   "--prefix-requests", "0",
                         "--chunk-tokens", "3",   "--format",          "fp32",
                         "--json"});
        QCOMPARE(r.status, 0);
        const auto ids = tableIds(nlohmann::json::parse(r.out));
        QVERIFY(std::find(ids.begin(), ids.end(), "prefix-sharing") == ids.end()); // 0: off
        QVERIFY(r.out.find("(3 tokens/step)") != std::string::npos);
        r = runCli({"schedule", file_, "--chunk-tokens", "0"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("--chunk-tokens") != std::string::npos);
        QCOMPARE(lines(r.err), 1);
    }

    void scheduleReadsAMixFile() {
        const auto mix = dir_.filePath("mix.json").toStdString();
        std::ofstream(mix) << R"({"requests": [{"prompt": "the quick brown fox", "tokens": 4},
                                               {"prompt": "hello", "tokens": 2},
                                               {"prompt": "a b c", "tokens": 6}]})";
        const auto r = runCli({"schedule", file_, "--slots", "2", "--mix", mix, "--json"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out);
        QVERIFY(doc["tables"][0]["title"].get<std::string>().find("3 requests, 12 output tokens") !=
                std::string::npos);
    }

    void scheduleRejectsBadInput() {
        auto r = runCli({"schedule", file_, "--slots", "0"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("zero slots") != std::string::npos);
        r = runCli({"schedule", file_, "--requests", "0"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("empty mix") != std::string::npos);
        const auto bad = dir_.filePath("bad.json").toStdString();
        std::ofstream(bad) << "{\"requests\": [{\"prompt\": ";
        r = runCli({"schedule", file_, "--mix", bad});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("does not parse") != std::string::npos);
        QCOMPARE(lines(r.err), 1);
        const auto empty = dir_.filePath("empty.json").toStdString();
        std::ofstream(empty) << R"({"requests": []})";
        r = runCli({"schedule", file_, "--mix", empty});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("no requests") != std::string::npos);
        // 600 tokens do not fit the synthetic model's context of 512.
        r = runCli({"schedule", file_, "--requests", "3", "--median", "2", "--longest", "600",
                    "--total", "604", "--quiet"});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.find("context") != std::string::npos);
        QCOMPARE(lines(r.err), 1);
    }

private:
    QTemporaryDir dir_;
    std::string file_;
};

QTEST_GUILESS_MAIN(TestCliServing)
#include "test_cli_serving.moc"
