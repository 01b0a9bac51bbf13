// Bounded and honest input (issue 49, items 1 and 5): every JSON input is read with a size
// cap, a depth limit and no duplicate keys, and its errors name the file, the line and the
// limit; numeric options that size a structure are bounded before any work; text from a file
// (a model's name, a preset's name) reaches the terminal with its control characters escaped.
#include "../models/TinyGgufModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace inferscope;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string presetJson(const std::string& name) {
    return R"({"name": ")" + name +
           R"(", "layers": 4, "heads": 8, "kv_heads": 2, "head_dim": 64, "parameters": 1000})";
}

} // namespace

class TestCliBounds : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::string write(const std::string& name, const std::string& content) {
        const std::string path = dir_.filePath(QString::fromStdString(name)).toStdString();
        std::ofstream(path, std::ios::binary) << content;
        return path;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void mixFilesAreCappedStrictAndNamed() {
        const std::string absent = dir_.filePath("absent.gguf").toStdString();
        auto refusal = [&](const std::string& mix) {
            return tests::runCli({"schedule", absent, "--mix", mix});
        };
        const auto large = refusal(write("large.json", std::string((1 << 20) + 1, ' ')));
        QVERIFY2(large.status == 2 && contains(large.err, "large.json") &&
                     contains(large.err, "larger than the 1 MiB"),
                 large.err.c_str());
        // 40 KB of '[': refused at the 65th, before the parser builds anything.
        const auto deep = refusal(write("deep.json", std::string(40000, '[')));
        QVERIFY2(deep.status == 2 && contains(deep.err, "deep.json") &&
                     contains(deep.err, "line 1") && contains(deep.err, "limit of 64 levels"),
                 deep.err.c_str());
        const auto duplicate =
            refusal(write("duplicate.json", "{\"requests\": [\n"
                                            "  {\"prompt\": \"a\",\n"
                                            "   \"tokens\": 2, \"tokens\": 3}]}"));
        QVERIFY2(duplicate.status == 2 && contains(duplicate.err, "duplicate.json") &&
                     contains(duplicate.err, "line 3") &&
                     contains(duplicate.err, "duplicate key \"tokens\""),
                 duplicate.err.c_str());
        std::string many = "{\"requests\": [";
        for (int i = 0; i < 1025; ++i)
            many += std::string(i ? "," : "") + R"({"prompt": "a", "tokens": 1})";
        const auto tooMany = refusal(write("many.json", many + "]}"));
        QVERIFY2(tooMany.status == 2 && contains(tooMany.err, "over the limit of 1024"),
                 tooMany.err.c_str());
    }

    void presetsAreBoundedAndDuplicatesRefused() {
        std::string many = "{\"presets\": [";
        for (int i = 0; i < 257; ++i) many += (i ? "," : "") + presetJson("P" + std::to_string(i));
        const auto tooMany =
            tests::runCli({"budget", "--no-detect", "--presets", write("many.json", many + "]}")});
        QVERIFY2(tooMany.status != 0 && contains(tooMany.err, "257 presets") &&
                     contains(tooMany.err, "limit of 256"),
                 tooMany.err.c_str());
        const auto duplicate =
            tests::runCli({"budget", "--no-detect", "--presets",
                           write("dup.json", "{\"presets\": [],\n \"presets\": []}")});
        QVERIFY2(duplicate.status != 0 && contains(duplicate.err, "dup.json") &&
                     contains(duplicate.err, "line 2") && contains(duplicate.err, "duplicate key"),
                 duplicate.err.c_str());
    }

    void sizingOptionsAreBoundedBeforeAnyWork() {
        const std::string absent = dir_.filePath("absent.gguf").toStdString();
        // The simulator streams its steps: the steps it keeps and the slot-steps it builds
        // are what is bounded (300,000 requests on 65,536 slots fit now).
        const auto steps =
            tests::runCli({"schedule", absent, "--simulate", "1000000", "--simulate-slots", "1"});
        QVERIFY2(steps.status == 2 && contains(steps.err, "steps, over the limit of 16777216"),
                 steps.err.c_str());
        const auto work = tests::runCli({"schedule", absent, "--simulate", "1000",
                                         "--simulate-slots", "65536", "--longest", "100000"});
        QVERIFY2(work.status == 2 && contains(work.err, "slot-steps, over the limit of 1073741824"),
                 work.err.c_str());
        const auto requests = tests::runCli({"schedule", absent, "--requests", "100000"});
        QVERIFY2(requests.status == 2 && contains(requests.err, "--requests"),
                 requests.err.c_str());
    }

    // A model's name and a preset's name with a terminal escape sequence (ESC [ 2 J clears
    // the screen; U+009B is the one-character CSI) print escaped.
    void textFromFilesIsEscaped() {
        const std::string hostile = "Evil\x1b[2J\xc2\x9b"
                                    "31mName\x07";
        auto writer = tiny::writer();
        writer.set("general.name", hostile);
        const auto model =
            tiny::writeBytes(dir_.path().toStdString(), "named.gguf", writer.bytes());
        const auto info = tests::runCli({"info", model.string()});
        QVERIFY2(info.status == 0, info.err.c_str());
        QVERIFY2(contains(info.out, "Evil\\x1b[2J\\xc2\\x9b31mName\\x07"), info.out.c_str());
        QVERIFY(!contains(info.out, "\x1b") && !contains(info.out, "\x07") &&
                !contains(info.out, "\xc2\x9b"));

        const auto presets =
            write("named.json", "{\"presets\": [" + presetJson("Bad\\u001b[2JPreset") + "]}");
        const auto budget =
            tests::runCli({"budget", "--no-detect", "--no-presets", "--presets", presets});
        QVERIFY2(budget.status == 0, budget.err.c_str());
        QVERIFY2(contains(budget.out, "Bad\\x1b[2JPreset"), budget.out.c_str());
        QVERIFY(!contains(budget.out, "\x1b"));
    }
};

QTEST_GUILESS_MAIN(TestCliBounds)
#include "test_cli_bounds.moc"
