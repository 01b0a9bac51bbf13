// Every numeric option of inferscope-cli has its range written in docs/cli-options.md, and the
// CLI refuses a value past either end before it reads the model (issue 49, item 1): each row
// of the page's first table runs with its min - 1 and its max + 1 against a model path that
// does not exist, so a range checked only after a load, or one the page states wrong, fails
// here. The page must also list every option the CLI reads as a number.
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace inferscope;

namespace {

struct RangeRow {
    std::vector<std::string> command; // words, MODEL and OUT still to be replaced
    std::string option;
    std::string min, max;
};

std::filesystem::path sourceRoot() {
    return std::filesystem::path(INFERSCOPE_TEST_DATA).parent_path().parent_path();
}

std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> result;
    std::stringstream stream(line);
    std::string cell;
    std::getline(stream, cell, '|'); // before the first bar
    while (std::getline(stream, cell, '|')) {
        const auto first = cell.find_first_not_of(' ');
        const auto last = cell.find_last_not_of(' ');
        result.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    if (!result.empty() && result.back().empty()) result.pop_back();
    return result;
}

// The first table of the page: command | option | min | max | what it bounds.
std::vector<RangeRow> rangeTable(const std::string& page) {
    std::vector<RangeRow> rows;
    std::stringstream stream(page);
    std::string line;
    bool inTable = false;
    while (std::getline(stream, line)) {
        if (line.rfind("| command | option | min | max", 0) == 0) {
            inTable = true;
            continue;
        }
        if (!inTable) continue;
        if (line.rfind("| ---", 0) == 0) continue;
        if (line.rfind("|", 0) != 0) break; // the table ends at its first other line
        const auto row = cells(line);
        if (row.size() != 5) continue;
        RangeRow r;
        std::stringstream words(row[0]);
        for (std::string word; words >> word;) r.command.push_back(word);
        r.option = row[1];
        r.min = row[2];
        r.max = row[3];
        rows.push_back(r);
    }
    return rows;
}

std::string plusOne(const std::string& integer, long long delta) {
    return std::to_string(std::stoll(integer) + delta);
}

} // namespace

class TestCliOptionRanges : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string page_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        page_ = readFile(sourceRoot() / "docs" / "cli-options.md");
        QVERIFY(!page_.empty());
    }

    void everyRangeIsRefusedAtBothEndsBeforeTheModel() {
        const auto rows = rangeTable(page_);
        QVERIFY2(rows.size() >= 50, std::to_string(rows.size()).c_str());
        const std::string absent = dir_.filePath("absent.gguf").toStdString();
        const std::string out = dir_.filePath("out.gguf").toStdString();
        for (const auto& row : rows) {
            std::vector<std::string> args;
            for (const auto& word : row.command)
                args.push_back(word == "MODEL" ? absent : word == "OUT" ? out : word);
            const std::string expected =
                row.option + " must be between " + row.min + " and " + row.max;
            for (const auto& value : {plusOne(row.max, 1), plusOne(row.min, -1)}) {
                auto call = args;
                call.push_back(row.option);
                call.push_back(value);
                const auto result = tests::runCli(call);
                const std::string what = row.command.front() + " " + row.option + " " + value +
                                         ": status " + std::to_string(result.status) + ", " +
                                         result.err;
                QVERIFY2(result.status == 2, what.c_str());
                QVERIFY2(result.err.find(expected) != std::string::npos, what.c_str());
            }
        }
        QVERIFY(!std::filesystem::exists(out)); // nothing was written
    }

    // Every option app/cli reads with Arguments::integer or ::number is on the page.
    void thePageListsEveryNumericOption() {
        const std::regex read(R"(a\.(integer|number)\(\s*"(-[-a-zA-Z]+)\")");
        std::set<std::string> options;
        for (const auto& entry :
             std::filesystem::directory_iterator(sourceRoot() / "app" / "cli")) {
            const auto text = readFile(entry.path());
            for (std::sregex_iterator it(text.begin(), text.end(), read), end; it != end; ++it)
                options.insert((*it)[2]);
        }
        QVERIFY(options.size() >= 40);
        for (const auto& option : options)
            QVERIFY2(page_.find("| " + option + " |") != std::string::npos, option.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCliOptionRanges)
#include "test_cli_option_ranges.moc"
