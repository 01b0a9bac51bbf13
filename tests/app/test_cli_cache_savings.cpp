// `inferscope-cli budget`, `macs`, `attention` and `generate --compare-cache` end to end on a
// synthetic GGUF file and lavapipe: the tables come out as JSON with their ids, the engine's
// counter agrees with the formula, and mistakes (an unknown precision, a bad presets file, a head
// too wide) exit with one clear line.
#include "tests/SyntheticModels.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace inferscope;
using inferscope::tests::runCli;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

bool oneLine(const std::string& text) {
    return !text.empty() && text.find('\n') == text.size() - 1;
}

} // namespace

class TestCliCacheSavings : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string model_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = tests::writeTwoLayerGqaModel(dir_.filePath("synthetic.gguf").toStdString());
    }

    void budgetPutsTheModelFirst() {
        const auto r = runCli(
            {"budget", model_, "--gpu", "8,80", "--precision", "int8", "--no-detect", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        const auto& tables = doc.at("tables");
        QCOMPARE(tables.size(), std::size_t(3));
        QCOMPARE(tables[0].at("id").get<std::string>(), std::string("kv-bytes-per-token"));
        // 2 (K,V) x 2 layers x 2 KV heads x 16 dims x 2 bytes; MHA doubles it (4 heads).
        QCOMPARE(tables[0]["rows"][0][4].get<std::int64_t>(), std::int64_t(256));
        QCOMPARE(tables[0]["rows"][0][6].get<std::int64_t>(), std::int64_t(512));
        QCOMPARE(tables[1]["rows"].size(), std::size_t(9)); // the model + eight presets
        const auto mqa = runCli({"budget", "--variant", "mqa", "--no-detect"});
        QCOMPARE(mqa.status, 0);
        QVERIFY(contains(mqa.out, "MQA"));
    }

    void budgetRefusesBadInput() {
        const auto precision = runCli({"budget", "--precision", "int3", "--no-detect"});
        QCOMPARE(precision.status, 2);
        QVERIFY2(oneLine(precision.err) && contains(precision.err, "int3"), precision.err.c_str());
        const auto gpu = runCli({"budget", "--gpu", "8,zero", "--no-detect"});
        QCOMPARE(gpu.status, 2);
        const std::string presets = dir_.filePath("presets.json").toStdString();
        std::ofstream(presets) << R"({"presets": [{"name": "x", "layers": 2, "heads": 6,
            "kv_heads": 4, "head_dim": 8, "parameters": 100}]})";
        const auto bad = runCli({"budget", "--presets", presets, "--no-detect"});
        QVERIFY(bad.status != 0);
        QVERIFY2(oneLine(bad.err) && contains(bad.err, "kv_heads"), bad.err.c_str());
    }

    void macsCountsAndChecks() {
        const auto formula =
            runCli({"macs", model_, "-P", "8", "-T", "64", "--formula-only", "--json"});
        QVERIFY2(formula.status == 0, formula.err.c_str());
        const auto doc = nlohmann::json::parse(formula.out);
        QCOMPARE(doc.at("tables").size(), std::size_t(1));
        QCOMPARE(doc["tables"][0]["rows"].size(), std::size_t(7)); // T = 1, 2, 4, ..., 64

        const auto measured = runCli({"macs", model_, "-P", "6", "-T", "64", "--measure", "4",
                                      "--backend", "vulkan", "--format", "fp16", "--json"});
        QVERIFY2(measured.status == 0, measured.err.c_str());
        const auto run = nlohmann::json::parse(measured.out);
        QCOMPARE(run.at("tables").size(), std::size_t(3)); // growth, counter, peak memory
        QCOMPARE(run["tables"][1]["id"].get<std::string>(), std::string("mac-counter"));
        QCOMPARE(run["tables"][1]["rows"].size(), std::size_t(4));
        for (const auto& row : run["tables"][1]["rows"])
            QCOMPARE(row.back().get<std::string>(), std::string("yes"));

        const auto tooLong = runCli({"macs", model_, "-P", "400", "-T", "400", "--formula-only"});
        QCOMPARE(tooLong.status, 2);
    }

    // generate prints the tables the window's panels draw (compute::experiments::RunTables):
    // prefill/decode, kernels, the KV cache as it grows and per layer, cached vs uncached.
    void generatePrintsThePanelsTables() {
        const int tokens = 4;
        const auto r = runCli({"generate", model_, "-p", "hello world", "-n",
                               std::to_string(tokens), "--backend", "vulkan", "--format", "fp16",
                               "--timings", "--kv-cache", "--compare-cache", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        std::vector<std::string> ids;
        for (const auto& table : doc.at("tables")) ids.push_back(table.at("id"));
        QCOMPARE(ids, (std::vector<std::string>{"timings", "kernel-timings", "kv-cache-growth",
                                                "kv-cache-per-layer", "cached-vs-uncached"}));
        const auto& tables = doc["tables"];
        const std::size_t generated = doc.at("generated_ids").size();
        QVERIFY(generated >= 1);
        QCOMPARE(tables[0]["rows"].size(), generated); // the prefill, then each decode step
        QVERIFY(!tables[1]["rows"].empty());
        for (const auto& kernel : tables[1]["rows"]) // a mean wherever there were decode steps
            QCOMPARE(kernel.back().is_null(), generated == 1);
        // One sample per generated token; fp16 K and V: measured bytes on the fp16 formula.
        QCOMPARE(tables[2]["rows"].size(), generated);
        for (const auto& sample : tables[2]["rows"])
            QCOMPARE(sample[1].get<std::int64_t>(), sample[3].get<std::int64_t>());
        QCOMPARE(tables[3]["rows"].size(), std::size_t(2)); // one row per layer
        // Greedy both ways, no stop tokens: every token made, the same ones.
        QCOMPARE(tables[4]["rows"].size(), std::size_t(tokens));
        for (const auto& row : tables[4]["rows"])
            QCOMPARE(row.back().get<std::string>(), std::string("yes"));

        const auto both = runCli({"generate", model_, "-p", "hi", "--compare-cache", "--no-cache"});
        QCOMPARE(both.status, 2);
        QVERIFY2(oneLine(both.err) && contains(both.err, "--no-cache"), both.err.c_str());
    }

    void softLabelsAtTwoTemperatures() {
        const auto r = runCli({"softlabels", model_, "-p", "hello world", "--temp", "1,2",
                               "--scheme", "int8-row", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(doc["tables"].size(), std::size_t(3));
        const auto& summary = doc["tables"][1]["rows"];
        // At T = 2 the top-1 / top-3 ratio is the square root of the T = 1 ratio.
        const double r1 = summary[0][3].get<double>(), r2 = summary[1][3].get<double>();
        QVERIFY(std::fabs(r2 - std::sqrt(r1)) < 1e-9);
        for (const auto& bad :
             std::vector<std::vector<std::string>>{{"softlabels", model_, "--temp", "0"},
                                                   {"softlabels", model_, "--temp", "1,-2"},
                                                   {"softlabels", model_, "--scheme", "int3"},
                                                   {"softlabels", model_, "-p", ""}}) {
            const auto e = runCli(bad);
            QCOMPARE(e.status, 2);
            QVERIFY2(oneLine(e.err), e.err.c_str());
        }
    }

    void attentionHeadBothWays() {
        const auto r = runCli({"attention", "--lengths", "64,128", "--repeats", "1", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(doc["tables"][0]["id"].get<std::string>(), std::string("attention-head"));
        QCOMPARE(doc["tables"][0]["rows"].size(), std::size_t(2));
        QCOMPARE(doc["tables"][0]["rows"][1][1].get<std::int64_t>(), std::int64_t(128 * 128 * 4));
        const auto wide = runCli({"attention", "--dim", "65"});
        QCOMPARE(wide.status, 2);
        QVERIFY(oneLine(wide.err));
    }
};

QTEST_GUILESS_MAIN(TestCliCacheSavings)
#include "test_cli_cache_savings.moc"
