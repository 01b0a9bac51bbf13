// The window in front of a class (issue 48 item 7): Ctrl+= and Ctrl+- step through 1.0, 1.25,
// 1.5, 1.75, 2.0; the wheel changes a control only when it has the focus (else the controls
// column scrolls); a long progress or status line never widens a 1280 x 800 window; Ctrl+Return
// that cannot run says why; the output names the model and scheme that produced it; dialogs
// take the scaled text.
#include "app/gui/ControlsColumn.hpp"
#include "app/gui/MainWindow.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/TestTime.hpp"
#include "widgets/LabPanel.hpp"

#include <QAction>
#include <QCheckBox>
#include <QDialog>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>
#include <QtTest/qtestspontaneevent.h>
#include <QtTest>
#include <atomic>
#include <thread>

using namespace inferscope;
using namespace inferscope::gui;
using inferscope::tests::scaledMs;

namespace {
// One notch of the wheel, down, over the middle of widget, as the windowing system sends it:
// spontaneous, so QApplication hands the focus by policy and offers an unaccepted event to
// the parents in turn (it does neither for an event a program sends).
void wheelDown(QWidget* widget) {
    const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
    QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QSpontaneKeyEvent::setSpontaneous(&event);
    qApp->notify(widget, &event); // sendEvent() would mark it as the program's own again
}

QString statusText(MainWindow& window) {
    auto* label = window.findChild<QLabel*>("statusLabel");
    return label ? label->text() : QString();
}
} // namespace

class TestGuiProjector : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("InferScope");
        QCoreApplication::setApplicationName("inferscope-test-projector");
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.hiddenSize = 64;
        spec.heads = 2;
        spec.kvHeads = 1;
        spec.headDim = 32;
        spec.ffnSize = 128;
        spec.vocabSize = 300;
        modelPath_ = dir_.filePath("synthetic.gguf");
        models::writeSyntheticGguf(spec, modelPath_.toStdString());
    }
    void init() { QSettings().clear(); }

    void scaleStepsThroughTheProjectorSizes() {
        const QList<double> up = {1.0, 1.25, 1.5, 1.75, 2.0, 2.0};
        for (qsizetype i = 0; i + 1 < up.size(); ++i)
            QCOMPARE(MainWindow::steppedScale(up[i], +1), up[i + 1]);
        for (qsizetype i = up.size() - 1; i > 0; --i)
            QCOMPARE(MainWindow::steppedScale(up[i], -1), up[i - 1] == up[i] ? 1.75 : up[i - 1]);
        QCOMPARE(MainWindow::steppedScale(1.0, -1), 1.0);
        QCOMPARE(MainWindow::steppedScale(1.3, +1), 1.5); // a --scale between steps
        QCOMPARE(MainWindow::steppedScale(1.3, -1), 1.25);

        MainWindow window(cpuBackendFactory());
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QCOMPARE(window.presentationScale(), 1.0);
        QList<double> seen;
        for (int i = 0; i < 5; ++i) {
            QTest::keyClick(&window, Qt::Key_Equal, Qt::ControlModifier);
            seen << window.presentationScale();
        }
        QCOMPARE(seen, (QList<double>{1.25, 1.5, 1.75, 2.0, 2.0}));
        QTest::keyClick(&window, Qt::Key_Minus, Qt::ControlModifier);
        QTest::keyClick(&window, Qt::Key_Minus, Qt::ControlModifier);
        QCOMPARE(window.presentationScale(), 1.5);
    }

    void wheelChangesOnlyAFocusedControl() {
        MainWindow window(cpuBackendFactory());
        window.resize(1280, 480); // the column is taller than the window: it scrolls
        window.setPresentationScale(1.5);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        auto* penalty = window.controls()->findChildren<QDoubleSpinBox*>().last();
        QVERIFY(penalty);
        penalty->setValue(1.0);
        auto* scroll =
            qobject_cast<QScrollArea*>(window.controls()->parentWidget()->parentWidget());
        QVERIFY(scroll);
        auto* bar = scroll->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0, "the controls column should scroll at 480 px");
        bar->setValue(0);
        window.promptEditor()->setFocus();
        QVERIFY(!penalty->hasFocus());
        QCOMPARE(penalty->focusPolicy(), Qt::StrongFocus); // the wheel gives no focus
        // Over the spin box's text field, where the pointer is when it sits on the box.
        wheelDown(penalty->findChild<QLineEdit*>());
        QCOMPARE(penalty->value(), 1.0);
        QVERIFY2(bar->value() > 0, "the wheel over an unfocused box scrolls the column");
        penalty->setFocus();
        QVERIFY(penalty->hasFocus());
        wheelDown(penalty->findChild<QLineEdit*>());
        QVERIFY2(penalty->value() < 1.0, "a focused spin box follows the wheel");
    }

    void longLinesNeverWidenTheWindow() {
        MainWindow window(cpuBackendFactory());
        window.resize(1280, 800);
        window.setPresentationScale(1.5);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.width(), 1280);
        const QString longLine =
            QString("Speculative decoding: drafting 8 tokens with int4-g128, verifying them "
                    "with fp32, acceptance so far 0.62 over 240 drafted tokens, ")
                .repeated(3);
        // The status bar's line, as a job's progress sets it.
        emit window.jobs()->jobProgress(1, "speculative", longLine, 40);
        QCoreApplication::processEvents();
        QCOMPARE(statusText(window), longLine);
        // Every panel's own progress line (JobControls) at once.
        for (auto* label : window.findChildren<QLabel*>())
            if (label->objectName().endsWith("Progress")) label->setText(longLine);
        for (auto* panel : window.panels()) {
            window.showPanel(panel->panelId());
            QCoreApplication::processEvents();
            QVERIFY2(window.width() == 1280,
                     qPrintable(
                         QString("%1 px with %2 shown").arg(window.width()).arg(panel->panelId())));
        }
        QVERIFY(window.minimumSizeHint().width() <= 1280);
    }

    void refusedShortcutSaysWhy() {
        MainWindow window(cpuBackendFactory());
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        // No model: Generate is disabled, yet Ctrl+Return answers.
        QVERIFY(!window.generateAction()->isEnabled());
        QTest::keyClick(window.promptEditor(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY2(statusText(window).contains("Ctrl+O"), qPrintable(statusText(window)));

        QSignalSpy loaded(&window, &MainWindow::modelLoaded);
        window.loadModel(modelPath_);
        QVERIFY(loaded.wait(scaledMs(20000)));
        // A job of a panel holds the worker (as a scheme warming up or a lab run does).
        std::atomic<bool> release{false};
        const auto job = window.jobs()->start("speculative", [&release](auto& running) {
            while (!release && !running.control.cancelled())
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
        QTRY_VERIFY_WITH_TIMEOUT(window.isBusy(), scaledMs(5000));
        QTRY_VERIFY_WITH_TIMEOUT(!window.generateAction()->isEnabled(), scaledMs(5000));
        window.promptEditor()->setFocus();
        QTest::keyClick(window.promptEditor(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(!window.isGenerating());
        QVERIFY2(statusText(window).contains("waits") &&
                     statusText(window).contains(window.panel("speculative")->title()),
                 qPrintable(statusText(window)));
        release = true;
        QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), scaledMs(5000));
        Q_UNUSED(job);
        // Free again: the key generates, and the shortcut that explains steps aside.
        QTRY_VERIFY_WITH_TIMEOUT(window.generateAction()->isEnabled(), scaledMs(5000));
        for (auto* refused : window.findChildren<QShortcut*>("generateRefusedShortcut"))
            QVERIFY(!refused->isEnabled());
    }

    void outputNamesWhatProducedIt() {
        MainWindow window(cpuBackendFactory());
        QSignalSpy loaded(&window, &MainWindow::modelLoaded);
        window.loadModel(modelPath_);
        QVERIFY(loaded.wait(scaledMs(20000)));
        window.maxTokensBox()->setValue(4);
        window.chatToggle()->setChecked(false);
        window.promptEditor()->setPlainText("Once upon a time");
        QCOMPARE(window.controls()->outputTitle(), QString("Output"));
        QSignalSpy finished(&window, &MainWindow::generationFinished);
        QVERIFY(window.generate());
        QVERIFY(finished.wait(scaledMs(20000)));
        const QString title = window.controls()->outputTitle();
        QVERIFY2(title.startsWith("Output of ") && title.contains("fp32") &&
                     title.contains(window.backendName()),
                 qPrintable(title));
        QVERIFY(!window.outputView()->toPlainText().isEmpty());
    }

    // A dialog is a window of its own: it gets the scaled text of the window it belongs to
    // (File > Export all panels..., and through the same helper every file chooser and box).
    void dialogsFollowTheScale() {
        MainWindow window(cpuBackendFactory());
        window.setPresentationScale(1.5);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const double expected = window.centralWidget()->font().pointSizeF();
        QVERIFY(expected > QApplication::font().pointSizeF() * 1.4);
        QAction* exportAll = nullptr;
        for (auto* action : window.findChildren<QAction*>())
            if (action->text().startsWith("&Export all panels")) exportAll = action;
        QVERIFY(exportAll);
        double dialogPoints = 0, labelPoints = 0;
        QTimer::singleShot(0, &window, [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            if (!dialog) return;
            dialogPoints = dialog->font().pointSizeF();
            if (auto* label = dialog->findChild<QLabel*>())
                labelPoints = label->font().pointSizeF();
            dialog->reject();
        });
        exportAll->trigger(); // modal until the timer rejects it
        QCOMPARE(dialogPoints, expected);
        QCOMPARE(labelPoints, expected);
    }

private:
    QTemporaryDir dir_;
    QString modelPath_;
};

QTEST_MAIN(TestGuiProjector)
#include "test_gui_projector.moc"
