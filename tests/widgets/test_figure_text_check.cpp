// FigureTextCheck finds the text a chart had to cut: category labels Qt Charts shortened to
// "...", at a size where they cannot fit, and none where they can.
#include "widgets/FigureTextCheck.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QValueAxis>
#include <QtTest>

using inferscope::widgets::cutFigureTexts;

class FigureTextCheckTest : public QObject {
    Q_OBJECT
private slots:
    void findsLabelsCutToFit() {
        QWidget root;
        auto* view = new QChartView(&root);
        auto* chart = view->chart();
        chart->setTitle("Schemes");
        auto* set = new QBarSet("perplexity");
        QStringList names;
        for (int i = 0; i < 4; ++i) {
            *set << 10 + i;
            names << QString("int4 per group of %1 weights").arg(32 << i);
        }
        auto* series = new QBarSeries;
        series->append(set);
        chart->addSeries(series);
        auto* x = new QBarCategoryAxis;
        x->append(names);
        auto* y = new QValueAxis;
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        series->attachAxis(x);
        series->attachAxis(y);

        root.resize(320, 240);
        view->resize(root.size());
        root.show();
        QVERIFY(QTest::qWaitForWindowExposed(&root));
        QCoreApplication::processEvents();
        const auto narrow = cutFigureTexts(root);
        QVERIFY2(!narrow.isEmpty(), "four long names under a 320-pixel chart fit whole?");
        QVERIFY2(narrow.first().startsWith("Schemes: in"), qPrintable(narrow.first()));

        root.resize(2400, 900);
        view->resize(root.size());
        QCoreApplication::processEvents();
        QVERIFY2(cutFigureTexts(root).isEmpty(), qPrintable(cutFigureTexts(root).join("; ")));

        view->hide(); // what is not on screen is not checked
        root.resize(320, 240);
        QCoreApplication::processEvents();
        QVERIFY(cutFigureTexts(root).isEmpty());
    }
};

QTEST_MAIN(FigureTextCheckTest)
#include "test_figure_text_check.moc"
