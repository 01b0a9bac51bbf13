// Command-line parsing: typos and bad values must be clear errors, never ignored.
#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"

#include <QtTest>
#include <sstream>

using namespace inferscope::cli;

static long lineCount(const std::string& text) {
    return static_cast<long>(std::count(text.begin(), text.end(), '\n'));
}

class TestCliArguments : public QObject {
    Q_OBJECT
private slots:
    void parsesPositionalsValuesAndFlags() {
        OptionSpec spec{{"-n", "--prompt"}, {"--json"}, {{"-p", "--prompt"}}};
        Arguments a({"model.gguf", "-p", "hello", "-n", "12", "--json"}, spec);
        QCOMPARE(a.positionals().size(), std::size_t{1});
        QCOMPARE(a.positional(0, "MODEL"), std::string("model.gguf"));
        QCOMPARE(*a.value("--prompt"), std::string("hello"));
        QCOMPARE(a.integer("-n", 1, 1, 100), 12LL);
        QVERIFY(a.flag("--json"));
        Arguments b({"--prompt=x y"}, spec);
        QCOMPARE(*b.value("--prompt"), std::string("x y"));
    }
    void negativeNumbersArePositionals() {
        Arguments a({"-3"}, {});
        QCOMPARE(a.positional(0, "N"), std::string("-3"));
    }
    void rejectsUnknownOptionsAndBadValues() {
        OptionSpec spec{{"-n", "--temp"}, {"--json"}, {}};
        QVERIFY_THROWS_EXCEPTION(UsageError, Arguments({"--jsn"}, spec));
        QVERIFY_THROWS_EXCEPTION(UsageError, Arguments({"-n"}, spec));
        QVERIFY_THROWS_EXCEPTION(UsageError, Arguments({"--json=1"}, spec));
        Arguments a({"-n", "12x", "--temp", "abc"}, spec);
        QVERIFY_THROWS_EXCEPTION(UsageError, a.integer("-n", 1, 0, 100));
        QVERIFY_THROWS_EXCEPTION(UsageError, a.number("--temp", 1, 0, 10));
        Arguments b({"-n", "1000"}, spec);
        QVERIFY_THROWS_EXCEPTION(UsageError, b.integer("-n", 1, 0, 100));
        QVERIFY_THROWS_EXCEPTION(UsageError, b.positional(0, "MODEL"));
    }
    void cliReportsErrorsOnOneLine() {
        std::ostringstream out, err;
        QCOMPARE(runCli({"inferscope-cli", "frobnicate"}, out, err), 2);
        QVERIFY(err.str().find("unknown command 'frobnicate'") != std::string::npos);
        QCOMPARE(lineCount(err.str()), 1L);

        std::ostringstream out2, err2;
        QCOMPARE(runCli({"inferscope-cli", "info", "/nonexistent/model.gguf"}, out2, err2), 1);
        QVERIFY(err2.str().find("/nonexistent/model.gguf") != std::string::npos);
        QCOMPARE(lineCount(err2.str()), 1L);

        std::ostringstream out3, err3;
        QCOMPARE(runCli({"inferscope-cli", "generate", "default", "-n", "5"}, out3, err3), 2);
        QVERIFY(err3.str().find("-p PROMPT") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestCliArguments)
#include "test_cli_arguments.moc"
