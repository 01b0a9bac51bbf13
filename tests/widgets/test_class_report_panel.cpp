// The window's class report (ClassReportPanel) on a real job runner with a synthetic model on
// lavapipe: its File menu action, a report of two items written as HTML (parsing as XML) and
// as a PDF whose charts are vector paths (no embedded image), the summary table and the
// wall-time bars filled from the same result, and a cancelled report that writes nothing.
#include "tests/PanelJobs.hpp"
#include "tests/SyntheticModels.hpp"
#include "tests/TestTime.hpp"
#include "widgets/ClassReportPanel.hpp"
#include "widgets/LabJobs.hpp"
#include "widgets/PanelContext.hpp"

#include <QAction>
#include <QCheckBox>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::widgets;

class ClassReportPanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = QString::fromStdString(
            tests::writeTwoLayerGqaModel(dir_.filePath("synthetic.gguf").toStdString()));
    }

    void writesHtmlAndVectorPdf() {
        LabJobs jobs;
        ClassReportPanel panel;
        tests::attachPanel(jobs, panel);
        QCOMPARE(panel.fileActions().size(), 1);
        QCOMPARE(panel.fileActions().front()->objectName(), QString("classReportAction"));
        QVERIFY(tests::loadOnVulkan(jobs, model_));

        const QString html = dir_.filePath("report.html");
        QSignalSpy ended(&panel, &LabPanel::jobEnded);
        QVERIFY(panel.writeReport(html, {1, 14}) != 0);
        QTRY_VERIFY_WITH_TIMEOUT(!panel.lastWritten().isEmpty(), tests::scaledMs(120000));
        QCOMPARE(panel.lastWritten(), html);
        for (const auto& call : ended)
            QVERIFY2(call.at(1).toBool(), qPrintable(call.at(2).toString()));

        QFile file(html);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QXmlStreamReader reader(file.readAll());
        int svgs = 0;
        while (!reader.atEnd())
            if (reader.readNext() == QXmlStreamReader::StartElement &&
                reader.name() == QLatin1String("svg"))
                ++svgs;
        QVERIFY2(!reader.hasError(), qPrintable(reader.errorString()));
        QVERIFY(svgs >= 3); // item 1's two charts and the budget's

        QFile pdf(dir_.filePath("report.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf.readAll();
        QVERIFY(bytes.startsWith("%PDF"));
        QVERIFY(bytes.size() > 5000);
        QVERIFY2(!bytes.contains("/Subtype /Image"), "the charts went in as images");
        QVERIFY(!QFile::exists(dir_.filePath("report.pdf.partial")));

        // The panel shows the same report: a bar per item and the summary rows.
        QCOMPARE(panel.barCategories(), (QStringList{"1", "14"}));
        const auto tables = panel.dataTables();
        QVERIFY(tables.size() > 2);
        QCOMPARE(tables[1].id, std::string("class-report-summary"));
        QCOMPARE(tables[1].rows.size(), std::size_t(2));
    }

    void cancelledReportWritesNothing() {
        LabJobs jobs;
        ClassReportPanel panel;
        tests::attachPanel(jobs, panel);
        QVERIFY(tests::loadOnVulkan(jobs, model_));
        const QString html = dir_.filePath("cancelled.html");
        QSignalSpy ended(&panel, &LabPanel::jobEnded);
        QVERIFY(panel.writeReport(html) != 0);
        jobs.stopAll();
        QTRY_VERIFY_WITH_TIMEOUT(!ended.isEmpty(), tests::scaledMs(60000));
        QCOMPARE(ended.front().at(1).toBool(), false);
        QTest::qWait(200);
        QVERIFY(!QFile::exists(html));
        QVERIFY(!QFile::exists(dir_.filePath("cancelled.pdf")));
    }

private:
    QTemporaryDir dir_;
    QString model_;
};

QTEST_MAIN(ClassReportPanelTest)
#include "test_class_report_panel.moc"
