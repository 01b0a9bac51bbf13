// `inferscope-cli class-report` end to end on a synthetic GGUF file (lavapipe): one HTML file
// that parses as XML, holds a section per chapter item with a verdict, a non-empty SVG per
// chart and every table as JSON; a headless Chromium renders it with no console message and
// every chart in its DOM, prints it to PDF; --compare finds a changed cell and its delta; bad
// arguments are one clear error and leave no file, and so does Ctrl-C during the run. Chromium is a
// test dependency installed by scripts/setup (scripts/debian-packages.d/class-report.txt): missing,
// this test skips, and fails when INFERSCOPE_REQUIRE_MODEL asks for every prerequisite
// (scripts/test, CI).
#include "compute/experiments/report/ReportHtml.hpp"
#include "tests/SyntheticModels.hpp"
#include "tests/TestTime.hpp"
#include "tests/app/CliRunner.hpp"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

using namespace inferscope;
using inferscope::tests::runCli;

namespace {

std::string readAll(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Each <svg> element's count of drawn children (paths, circles, polygons, rects, lines).
QList<int> svgDrawings(const QByteArray& xml, QString* error) {
    QXmlStreamReader reader(xml);
    QList<int> drawings;
    int depthInSvg = 0;
    while (!reader.atEnd()) {
        reader.readNext();
        if (reader.isStartElement()) {
            if (reader.name() == QLatin1String("svg")) {
                drawings << 0;
                ++depthInSvg;
            } else if (depthInSvg > 0 && (reader.name() == QLatin1String("path") ||
                                          reader.name() == QLatin1String("circle") ||
                                          reader.name() == QLatin1String("polygon"))) {
                ++drawings.back();
            }
        } else if (reader.isEndElement() && reader.name() == QLatin1String("svg")) {
            --depthInSvg;
        }
    }
    if (reader.hasError())
        *error = QStringLiteral("line %1: %2").arg(reader.lineNumber()).arg(reader.errorString());
    return drawings;
}

} // namespace

class TestCliClassReport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = tests::writeTwoLayerGqaModel(dir_.filePath("synthetic.gguf").toStdString());
        html_ = dir_.filePath("report.html");
        std::ostringstream progress;
        auto* previous = std::cerr.rdbuf(progress.rdbuf());
        const QString pdf = dir_.filePath("report.pdf");
        const auto r =
            runCli({"class-report", model_, "-o", html_.toStdString(), "--pdf", pdf.toStdString()});
        std::cerr.rdbuf(previous);
        QVERIFY2(r.status == 0, r.err.c_str());
        // The same report as PDF, by Qt's writer (the window's), beside the HTML.
        QFile written(pdf);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(written.read(4), QByteArray("%PDF"));
        QVERIFY(written.size() > 10000);
        // Progress on stderr, each item's line with an estimate of the time left.
        const std::string lines = progress.str();
        for (int item = 1; item <= 14; ++item)
            QVERIFY2(lines.find("item " + std::to_string(item) + " (") != std::string::npos,
                     lines.c_str());
        QVERIFY2(lines.find(" left") != std::string::npos, lines.c_str());
        QVERIFY2(r.out.find("wrote ") == 0, r.out.c_str());
        QVERIFY(!QFile::exists(html_ + ".partial"));
        text_ = readAll(html_);
    }

    void isWellFormedWithASectionPerItem() {
        QString error;
        const auto drawings = svgDrawings(QByteArray::fromStdString(text_), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(drawings.size() >= 14); // at least a chart per item on this model
        for (int count : drawings) QVERIFY(count > 0);
        // No external resource: nothing is fetched from anywhere.
        for (const char* external : {"src=", "href=\"http", "@import", "url("})
            QVERIFY2(text_.find(external) == std::string::npos, external);
        const auto data = compute::experiments::extractReportJson(text_);
        QCOMPARE(data.at("sections").size(), std::size_t(14));
        int measured = 0;
        for (const auto& section : data.at("sections")) {
            const std::string verdict = section.at("verdict");
            QVERIFY(!verdict.empty());
            if (section.at("agreement") != "not measured") {
                ++measured;
                QVERIFY2(!section.at("tables").empty(), verdict.c_str());
                // A verdict states numbers, not only words.
                QVERIFY2(verdict.find_first_of("0123456789") != std::string::npos, verdict.c_str());
            }
        }
        QVERIFY2(measured >= 12, qPrintable(QString::number(measured)));
        // The provenance names the file's SHA-256 and the command line.
        const auto provenance = data.at("provenance").dump();
        QVERIFY(provenance.find("model SHA-256") != std::string::npos);
        QVERIFY(provenance.find("class-report") != std::string::npos);
        QVERIFY(provenance.find("Vulkan API") != std::string::npos);
    }

    void rendersInChromium() {
        QString chromium = QStandardPaths::findExecutable("chromium");
        if (chromium.isEmpty()) {
            if (qEnvironmentVariableIsSet("INFERSCOPE_REQUIRE_MODEL"))
                QFAIL("INFERSCOPE_REQUIRE_MODEL is set: chromium is missing (scripts/setup "
                      "installs it from scripts/debian-packages.d/class-report.txt)");
            QSKIP("chromium is missing (run scripts/setup)");
        }
        const QString profile = dir_.filePath("chromium-profile");
        const QStringList common{"--headless",
                                 "--no-sandbox",
                                 "--disable-gpu",
                                 "--no-first-run",
                                 "--user-data-dir=" + profile,
                                 "--enable-logging=stderr",
                                 "--v=0"};
        const QString url = QUrl::fromLocalFile(html_).toString();
        // The sanitizer build preloads the ASan runtime into every test process; Chromium is
        // not built for it and stalls with it loaded, so its processes run without the preload.
        QProcessEnvironment browserEnvironment = QProcessEnvironment::systemEnvironment();
        browserEnvironment.remove("LD_PRELOAD");
        QProcess dump;
        dump.setProcessEnvironment(browserEnvironment);
        dump.start(chromium, common + QStringList{"--dump-dom", url});
        QVERIFY(dump.waitForFinished(120000));
        QCOMPARE(dump.exitCode(), 0);
        const QByteArray dom = dump.readAllStandardOutput();
        const QString log = QString::fromUtf8(dump.readAllStandardError());
        // Any console message (an error, a failed resource) is logged as CONSOLE.
        QVERIFY2(!log.contains("CONSOLE"), qPrintable(log));
        // Every chart made it into the browser's DOM, with its drawing.
        const auto inSource = text_.size() ? QByteArray::fromStdString(text_).count("<svg ") : 0;
        QVERIFY(inSource > 0);
        QCOMPARE(dom.count("<svg "), inSource);
        QCOMPARE(dom.count("class=\"series\""),
                 QByteArray::fromStdString(text_).count("class=\"series\""));
        const QString pdf = dir_.filePath("report-chromium.pdf");
        QProcess print;
        print.setProcessEnvironment(browserEnvironment);
        print.start(chromium, common + QStringList{"--print-to-pdf=" + pdf, url});
        QVERIFY(print.waitForFinished(120000));
        QFile printed(pdf);
        QVERIFY(printed.open(QIODevice::ReadOnly));
        QVERIFY(printed.size() > 10000);
        QCOMPARE(printed.read(4), QByteArray("%PDF"));
    }

    void compareFindsAChangedCell() {
        auto data = compute::experiments::extractReportJson(text_);
        // A copy with one number of item 14's first table changed by +1.
        auto& sections = data.at("sections");
        auto& table = sections.at(13).at("tables").at(0);
        std::size_t column = 0;
        auto& row = table.at("rows").at(0);
        while (column < row.size() && !row.at(column).is_number()) ++column;
        QVERIFY(column < row.size());
        const double before = row.at(column).get<double>();
        row.at(column) = before + 1;
        const QString changed = dir_.filePath("changed.html");
        std::ofstream(changed.toStdString())
            << "<script type=\"application/json\" id=\"inferscope-report\">" << data.dump()
            << "</script>";
        const auto same = runCli(
            {"class-report", "--compare", html_.toStdString(), html_.toStdString(), "--json"});
        QVERIFY2(same.status == 0, same.err.c_str());
        const auto sameDoc = nlohmann::json::parse(same.out);
        QCOMPARE(sameDoc.at("tables").at(1).at("rows").size(), std::size_t(0));
        const auto r = runCli(
            {"class-report", "--compare", html_.toStdString(), changed.toStdString(), "--json"});
        QVERIFY2(r.status == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(r.out);
        const auto& cells = doc.at("tables").at(1).at("rows");
        QCOMPARE(cells.size(), std::size_t(1));
        QCOMPARE(cells.at(0).at(5).get<double>(), 1.0); // delta
        QVERIFY(cells.at(0).at(0).get<std::string>().find("item 14") == 0);
    }

    void interruptCancelsAndLeavesNoFile() {
        // Ctrl-C while the labs run: the report stops, status 130, no file and no temporary.
        const QString out = dir_.filePath("interrupted.html");
        std::thread interrupt([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(tests::scaledMs(1500)));
            std::raise(SIGINT);
        });
        // The command's progress and its cancel line go to std::cerr, as every command's do.
        std::ostringstream progress;
        auto* previous = std::cerr.rdbuf(progress.rdbuf());
        const auto r = runCli({"class-report", model_, "-o", out.toStdString()});
        std::cerr.rdbuf(previous);
        interrupt.join();
        const std::string err = progress.str();
        QCOMPARE(r.status, 130);
        QVERIFY2(err.find("cancelled; no file written") != std::string::npos, err.c_str());
        QVERIFY(!QFile::exists(out));
        QVERIFY(!QFile::exists(out + ".partial"));
    }

    void badArgumentsLeaveNoFile() {
        const QString out = dir_.filePath("bad.html");
        const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
            {{"class-report", model_, "-o", out.toStdString(), "--profile", "slow"},
             "unknown report profile 'slow'"},
            {{"class-report", model_, "-o", out.toStdString(), "--items", "15"}, "1 to 14"},
            {{"class-report", model_}, "missing -o"},
            {{"class-report", model_, "-o", dir_.filePath("no/such/dir/r.html").toStdString()},
             "does not exist"},
            {{"class-report", "--compare", model_, model_}, "no InferScope report data"},
        };
        for (const auto& [args, expected] : cases) {
            const auto r = runCli(args);
            QCOMPARE(r.status, 2);
            QVERIFY2(r.err.find(expected) != std::string::npos, r.err.c_str());
        }
        QVERIFY(!QFile::exists(out));
    }

private:
    QTemporaryDir dir_;
    std::string model_;
    QString html_;
    std::string text_;
};

QTEST_MAIN(TestCliClassReport) // --pdf draws with Qt's GUI modules
#include "test_cli_class_report.moc"
