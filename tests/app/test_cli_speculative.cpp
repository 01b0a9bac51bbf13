// `inferscope-cli speculative` end to end on a synthetic GGUF file (lavapipe): the four tables
// come out as JSON, greedy runs keep the target's tokens, and bad input (g = 0, a scheme
// without a GPU kernel, a negative temperature, a study longer than the context) is one clear
// error with status 2.
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace inferscope;
using inferscope::tests::runCli;

class TestCliSpeculative : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.seed = 5;
        spec.contextLength = 128;
        file_ = dir_.filePath("synthetic.gguf").toStdString();
        models::writeSyntheticGguf(spec, file_);
    }

    void printsEveryTable() {
        const auto r = runCli({"speculative", file_, "--draft", "int8-row,int4-tensor", "-g", "1,3",
                               "--positions", "12", "--tokens", "10", "-p", "hello world",
                               "--no-chat", "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        std::vector<std::string> ids;
        for (const auto& table : doc.at("tables")) ids.push_back(table.at("id"));
        QCOMPARE(ids, (std::vector<std::string>{"speculative-acceptance", "speculative-formula",
                                                "speculative-runs", "speculative-positions"}));
        const auto& acceptance = doc.at("tables").at(0);
        QCOMPARE(acceptance.at("rows").size(), std::size_t(2));
        // The formula table prints this device's prediction beside the chapter's: g c + v(g),
        // v(g) measured at g = 1 and 3, and the note that says why they part.
        const auto& formula = doc.at("tables").at(1);
        std::size_t onDevice = 0, verify = 0;
        for (std::size_t i = 0; i < formula.at("columns").size(); ++i) {
            const std::string name = formula.at("columns").at(i).at("name");
            if (name == "predicted on this device") onDevice = i;
            if (name == "verify cost v(g)") verify = i;
        }
        QVERIFY(onDevice > 0 && verify > 0);
        for (const auto& row : formula.at("rows")) {
            QVERIFY(row.at(verify).is_number() && row.at(verify).get<double>() > 0);
            QVERIFY(row.at(onDevice).is_number() && row.at(onDevice).get<double>() > 0);
        }
        QVERIFY2(formula.at("notes").back().get<std::string>().find("v(g)") != std::string::npos,
                 formula.dump().c_str());
        const auto& runs = doc.at("tables").at(2);
        QCOMPARE(runs.at("rows").size(), std::size_t(2));
        QVERIFY2(r.out.find("\"yes\"") != std::string::npos, r.out.c_str());
        QVERIFY(r.out.find("\"NO\"") == std::string::npos);
    }

    void badInputIsOneClearError() {
        const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
            {{"-g", "0"}, "-g expects positive integers"},
            {{"--draft", "int3"}, "'int3' has no GPU kernel"},
            {{"--temp", "-1"}, "--temp"},
            {{"-g", "200"}, "context"},
        };
        for (const auto& [extra, expected] : cases) {
            std::vector<std::string> args = {"speculative", file_,         "--no-chat", "-p",
                                             "hi",          "--positions", "8"};
            args.insert(args.end(), extra.begin(), extra.end());
            const auto r = runCli(args);
            QCOMPARE(r.status, 2);
            QVERIFY2(r.err.find(expected) != std::string::npos, r.err.c_str());
            QVERIFY(r.out.empty());
        }
    }

private:
    QTemporaryDir dir_;
    std::string file_;
};

QTEST_GUILESS_MAIN(TestCliSpeculative)
#include "test_cli_speculative.moc"
