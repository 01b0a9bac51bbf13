// Table: the record every experiment returns; its text and JSON renderings are what the CLI
// prints and what reports are diffed on.
#include "compute/Table.hpp"

#include <QtTest>
#include <nlohmann/json.hpp>

using namespace inferscope::compute;

class TestTable : public QObject {
    Q_OBJECT
private slots:
    void groupsThousandsLikeTheChapter() {
        QCOMPARE(groupThousands(23040), std::string("23,040"));
        QCOMPARE(groupThousands(12288), std::string("12,288"));
        QCOMPARE(groupThousands(999), std::string("999"));
        QCOMPARE(groupThousands(-1234567), std::string("-1,234,567"));
        QCOMPARE(groupThousands(0), std::string("0"));
    }
    void rendersAlignedText() {
        Table t;
        t.id = "demo";
        t.title = "Demo";
        t.addColumn("name").addColumn("bytes", "bytes").addColumn("ratio", "", 2);
        t.addRow({std::string("fp16"), std::int64_t{23040}, 1.0});
        t.addRow({std::string("int8"), std::int64_t{11520}, 0.5});
        t.notes.push_back("a note");
        std::string text = renderText(t);
        QVERIFY(text.find("Demo\n") == 0);
        QVERIFY(text.find("bytes (bytes)") != std::string::npos);
        QVERIFY(text.find("23,040") != std::string::npos);
        QVERIFY(text.find("0.50") != std::string::npos);
        QVERIFY(text.find("  a note") != std::string::npos);
        // Numbers are right-aligned: both rows end at the same column.
        auto line1 = text.substr(text.find("fp16"));
        auto line2 = text.substr(text.find("int8"));
        QCOMPARE(line1.find('\n'), line2.find('\n'));
    }
    void refusesRowsOfTheWrongWidth() {
        Table t;
        t.addColumn("a").addColumn("b");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, t.addRow({std::int64_t{1}}));
    }
    void jsonKeepsTypes() {
        Table t;
        t.id = "x";
        t.addColumn("n").addColumn("v", "ms").addColumn("s").addColumn("missing");
        t.addRow({std::int64_t{3}, 2.5, std::string("text"), Cell{}});
        auto j = toJson(t);
        QCOMPARE(j["id"].get<std::string>(), std::string("x"));
        QCOMPARE(j["columns"][1]["unit"].get<std::string>(), std::string("ms"));
        QVERIFY(j["rows"][0][0].is_number_integer());
        QCOMPARE(j["rows"][0][1].get<double>(), 2.5);
        QVERIFY(j["rows"][0][3].is_null());
        QCOMPARE(t.number(0, "n"), 3.0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, t.number(0, "s"));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, t.columnIndex("nope"));
    }
    void csvQuotesOnlyWhereItMustAndKeepsFullPrecision() {
        Table t;
        t.addColumn("name").addColumn("ms", "ms").addColumn("count").addColumn("gap");
        t.addRow({std::string("a, \"b\""), 0.1 + 0.2, std::int64_t{-7}, Cell{}});
        t.addRow({std::string("two\nlines"), 1e-9, std::int64_t{23040}, Cell{}});
        const std::string csv = renderCsv(t);
        QCOMPARE(csv, std::string("name,ms (ms),count,gap\r\n"
                                  "\"a, \"\"b\"\"\",0.30000000000000004,-7,\r\n"
                                  "\"two\nlines\",1e-09,23040,\r\n"));
        // The shortest text reads back as the same double.
        QCOMPARE(std::stod("0.30000000000000004"), 0.1 + 0.2);
    }
    void humanBytes() {
        QCOMPARE(inferscope::compute::humanBytes(512), std::string("512 B"));
        QCOMPARE(inferscope::compute::humanBytes(1536), std::string("1.5 KiB"));
        QCOMPARE(inferscope::compute::humanBytes(98362432), std::string("93.8 MiB"));
    }
};

QTEST_APPLESS_MAIN(TestTable)
#include "test_table.moc"
