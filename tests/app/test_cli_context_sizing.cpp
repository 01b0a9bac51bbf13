// Valid requests on a short context are served, options that cannot apply are refused first
// (issue 49, item 7): the warm-up, bench, batch and schedule's prefix-sharing demo size
// themselves to a model with a 16-token context; `macs --backend cpu`, `--system` without
// `--chat` and `bench --formats ""` are refused before the model loads.
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace inferscope;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestCliContextSizing : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string short_; // a 16-token context

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 1;
        spec.contextLength = 16;
        short_ = dir_.filePath("short.gguf").toStdString();
        models::writeSyntheticGguf(spec, short_);
    }

    void generateWarmsUpWithinTheContext() {
        const auto r = tests::runCli({"generate", short_, "-p", "ab", "-n", "4", "--greedy"});
        QVERIFY2(r.status == 0, r.err.c_str());
    }

    void benchAndBatchDefaultsFitTheContext() {
        const auto bench = tests::runCli({"bench", short_, "--no-breakdown", "--quiet"});
        QVERIFY2(bench.status == 0, bench.err.c_str());
        QVERIFY2(contains(bench.out, "Decode"), bench.out.c_str());
        const auto batch = tests::runCli({"batch", short_, "--batches", "1,2", "--quiet"});
        QVERIFY2(batch.status == 0, batch.err.c_str());
        // A length given is kept, and refused when it cannot fit.
        const auto given = tests::runCli({"batch", short_, "--context", "64", "--quiet"});
        QCOMPARE(given.status, 2);
        QVERIFY2(contains(given.err, "context of 16"), given.err.c_str());
    }

    void scheduleLeavesOutThePrefixDemoItCannotHold() {
        const std::string mix = dir_.filePath("mix.json").toStdString();
        std::ofstream(mix) << R"({"requests": [{"prompt": "ab", "tokens": 3},
                                               {"prompt": "ba", "tokens": 4},
                                               {"prompt": "a", "tokens": 2}]})";
        const auto r = tests::runCli(
            {"schedule", short_, "--mix", mix, "--slots", "2", "--verify", "0", "--quiet"});
        QVERIFY2(r.status == 0, r.err.c_str());
        QVERIFY2(contains(r.out, "Prefix sharing left out"), r.out.c_str());
    }

    // The model path names no file: a refusal that names the option, not the missing
    // model, came before the load.
    void optionsThatCannotApplyAreRefusedBeforeAnyWork() {
        const std::string absent = dir_.filePath("absent.gguf").toStdString();
        const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
            {{"macs", absent, "--backend", "cpu"}, "--formula-only"},
            {{"generate", absent, "-p", "a", "--system", "be brief"}, "needs --chat"},
            {{"bench", absent, "--formats", ""}, "--formats is empty"},
            {{"bench", absent, "--formats", "f16,nope"}, "unknown weight format 'nope'"}};
        for (const auto& [command, expected] : cases) {
            const auto r = tests::runCli(command);
            const std::string label = command[0] + ": " + r.err;
            QVERIFY2(r.status == 2 && contains(r.err, expected), label.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliContextSizing)
#include "test_cli_context_sizing.moc"
