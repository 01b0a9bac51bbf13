// The class report's writer, without a model: SHA-256 against FIPS 180-4's examples, text
// escaped for XML (and bytes that are not UTF-8 replaced), a chart's SVG well-formed with its
// title, axis titles, legend and a different dash pattern and marker per series, the HTML
// parsing as XML with its JSON block read back, and the comparison of two reports cell by cell.
#include "compute/experiments/report/ClassReportLab.hpp"
#include "compute/experiments/report/Provenance.hpp"
#include "compute/experiments/report/ReportCompare.hpp"
#include "compute/experiments/report/ReportHtml.hpp"

#include <QSet>
#include <QXmlStreamReader>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

namespace {

QString xmlError(const std::string& text) {
    QXmlStreamReader reader(QByteArray::fromStdString(text));
    while (!reader.atEnd()) reader.readNext();
    return reader.hasError() ? reader.errorString() : QString();
}

std::vector<std::uint8_t> bytesOf(const std::string& text) {
    return {text.begin(), text.end()};
}

ClassReport sampleReport(double value) {
    ClassReport report;
    report.profile = "quick";
    report.provenance.id = "provenance";
    report.provenance.addColumn("property").addColumn("value");
    report.provenance.addRow({std::string("device"), std::string("a <device> & more")});
    ReportSection section;
    section.chapter = chapterClaims()[0];
    section.agreement = Agreement::Differs;
    section.verdict = "measured " + fixed(value, 1) + " vs 9x";
    Table t;
    t.id = "numbers";
    t.addColumn("name").addColumn("value", "ms", 2);
    t.addRow({std::string("a"), value});
    t.addRow({std::string("b"), std::int64_t(7)});
    section.tables.push_back(t);
    section.charts.push_back({"c",
                              "A chart",
                              "x (tokens)",
                              "y (ms)",
                              true,
                              false,
                              {{"first", {{1, 2}, {10, 3}}}, {"second", {{1, 1}, {10, 5}}}},
                              "a caption"});
    report.sections.push_back(section);
    return report;
}

} // namespace

class TestReportHtml : public QObject {
    Q_OBJECT
private slots:
    void sha256MatchesTheStandardsExamples() {
        QCOMPARE(sha256Hex(bytesOf("abc")),
                 std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(sha256Hex(bytesOf("")),
                 std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(sha256Hex(bytesOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        // A million 'a' crosses many blocks.
        QCOMPARE(sha256Hex(std::vector<std::uint8_t>(1000000, 'a')),
                 std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    void textIsEscapedAndMadeUtf8() {
        QCOMPARE(escapeXml("a<b>&\"c'"), std::string("a&lt;b&gt;&amp;&quot;c&#39;"));
        QCOMPARE(escapeXml("ok \xc3\xa6 \xff <"), std::string("ok \xc3\xa6 \xEF\xBF\xBD &lt;"));
        QCOMPARE(escapeXml("cut \xe2\x82"), std::string("cut \xEF\xBF\xBD\xEF\xBF\xBD"));
    }

    void chartHasTitlesLegendAndStyles() {
        const auto report = sampleReport(1.5);
        const std::string svg = renderSvgChart(report.sections[0].charts[0]);
        QVERIFY2(xmlError(svg).isEmpty(), qPrintable(xmlError(svg)));
        for (const char* part : {"A chart", "x (tokens) (log scale)", "y (ms)", ">first<",
                                 ">second<", "stroke-dasharray=\"8 4\"", "<rect", "<circle"})
            QVERIFY2(svg.find(part) != std::string::npos, part);
        QCOMPARE(QString::fromStdString(svg).count("class=\"series\""), 2);
    }

    void htmlParsesAndCarriesItsData() {
        const auto report = sampleReport(1.5);
        const std::string html = renderReportHtml(report);
        QVERIFY2(xmlError(html).isEmpty(), qPrintable(xmlError(html)));
        QVERIFY(html.find("a &lt;device&gt; &amp; more") != std::string::npos);
        const auto data = extractReportJson(html);
        QCOMPARE(data.at("sections").at(0).at("tables").at(0).at("id"), "numbers");
        QCOMPARE(data.at("provenance").at("rows").at(0).at(1), "a <device> & more");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, extractReportJson("<html></html>"));
    }

    void comparisonGivesNumericDeltas() {
        const auto a = reportJson(sampleReport(1.5)), b = reportJson(sampleReport(2.0));
        const auto same = compareReports(a, a);
        QCOMPARE(same.changedCells, std::size_t(0));
        QVERIFY(same.equalCells > 0);
        const auto diff = compareReports(a, b);
        QCOMPARE(diff.changedCells, std::size_t(1));
        QCOMPARE(diff.cells.rows.size(), std::size_t(1));
        QCOMPARE(diff.cells.number(0, "delta"), 0.5);
        QCOMPARE(diff.cells.number(0, "change"), 100.0 / 3);
        QCOMPARE(std::get<std::string>(diff.cells.at(0, "row")), std::string("a"));
    }

    void profilesAreTheTwoNamed() {
        QCOMPARE(reportProfile("quick").name, std::string("quick"));
        QCOMPARE(reportProfile("full").cachingTokens, 256);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, reportProfile("slow"));
        QCOMPARE(chapterClaims().size(), std::size_t(14));
        for (std::size_t i = 0; i < chapterClaims().size(); ++i)
            QCOMPARE(chapterClaims()[i].item, int(i + 1));
    }
};

QTEST_GUILESS_MAIN(TestReportHtml)
#include "test_report_html.moc"
