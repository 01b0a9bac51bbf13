// `inferscope-cli report ...` end to end on a synthetic GGUF file: the tables come out as JSON
// with the ids the panels read, and argument mistakes exit with status 2.
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace inferscope;

namespace {

using inferscope::tests::runCli;

std::vector<std::string> tableIds(const std::string& json) {
    std::vector<std::string> ids;

    const auto doc = nlohmann::json::parse(json); // named: a temporary would die before the loop
    for (const auto& table : doc.at("tables")) ids.push_back(table.at("id").get<std::string>());
    return ids;
}

} // namespace

class TestCliReport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.hiddenSize = 128;
        spec.ffnSize = 256;
        spec.outlierDims = {9};
        file_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, file_);
    }

    void weights() {
        const auto r = runCli({"report", "weights", file_, "--scheme", "int4-g128,nf4", "--matrix",
                               "model.layers.1.mlp.down_proj.weight", "--json"});
        QCOMPARE(r.status, 0);
        QCOMPARE(tableIds(r.out), (std::vector<std::string>{"weight-error", "weight-outliers"}));
        const auto doc = nlohmann::json::parse(r.out);
        QCOMPARE(doc["tables"][0]["rows"].size(), std::size_t(2));
        const auto text = runCli({"report", "weights", file_, "--scheme", "int8-row"});
        QCOMPARE(text.status, 0);
        QVERIFY(text.out.find("int8-row") != std::string::npos);
        QVERIFY(text.out.find("14 projection matrices") != std::string::npos);
    }

    void activations() {
        const auto r = runCli({"report", "activations", file_, "-p", "hello world, hello again",
                               "--layer", "1", "--top", "1", "--json"});
        QCOMPARE(r.status, 0);
        QCOMPARE(tableIds(r.out),
                 (std::vector<std::string>{"activation-layers", "activation-histogram",
                                           "activation-top-dims", "activation-levels",
                                           "activation-levels-per-dim"}));
        const auto doc = nlohmann::json::parse(r.out);
        QVERIFY(doc["prompt_tokens"].get<int>() > 0);
    }

    void mistakesAreUsageErrors() {
        QCOMPARE(runCli({"report"}).status, 2);
        QCOMPARE(runCli({"report", "bananas", file_}).status, 2);
        QCOMPARE(runCli({"report", "weights", file_, "--scheme", "int3"}).status, 2);
        QCOMPARE(runCli({"report", "weights", file_, "--matrix", "blk.0.attn_norm.weight"}).status,
                 2);
        QCOMPARE(runCli({"report", "weights", file_, "--matrix", "blk.9.attn_q.weight"}).status, 2);
        QCOMPARE(runCli({"report", "activations", file_}).status, 2); // no prompt
        QCOMPARE(runCli({"report", "activations", file_, "-p", "hi", "--layer", "7"}).status, 2);
        QCOMPARE(runCli({"report", "quality", file_, "--battery", "/nonexistent.json"}).status, 2);
    }

private:
    QTemporaryDir dir_;
    std::string file_;
};

QTEST_APPLESS_MAIN(TestCliReport)
#include "test_cli_report.moc"
