// inferscope's own command line: --help and --version answer without a display, and an
// unknown --tab is an error that lists the panels (issue 13 item 7, the window's part).
#include "app/gui/CommandLine.hpp"
#include "app/gui/MainWindow.hpp"
#include "widgets/ChartPanel.hpp"

#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

using namespace inferscope::gui;

namespace {
// The window's executable beside this test's build folder: <build>/app/inferscope.
QString windowExecutable() {
    QDir dir(QCoreApplication::applicationDirPath());
    for (int up = 0; up < 3; ++up) {
        if (QFileInfo(dir.filePath("app/inferscope")).isExecutable())
            return dir.filePath("app/inferscope");
        dir.cdUp();
    }
    return {};
}

// No display of any kind: what a terminal over ssh or a CI job has.
QProcessEnvironment withoutDisplay() {
    auto env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(name);
    return env;
}

struct Finished {
    int status = -1;
    QString out, err;
};

Finished runWindow(const QStringList& arguments, const QProcessEnvironment& env) {
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(windowExecutable(), arguments);
    Finished result;
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return result;
    }
    result.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}
} // namespace

class TestGuiCommandLine : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setApplicationName("inferscope");
        QCoreApplication::setApplicationVersion("0.1.0");
    }

    void helpAndVersionAreAnsweredNotExited() {
        QString error;
        auto help = parseCommandLine({"inferscope", "--help"}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(help.help);
        QVERIFY(help.text.contains("--model") && help.text.contains("--export"));
        QVERIFY(help.text.contains("kv-cache")); // --tab names its ids
        auto version = parseCommandLine({"inferscope", "--version"}, &error);
        QVERIFY(version.version);
        QVERIFY2(version.text.contains("0.1.0"), qPrintable(version.text));
        auto plain = parseCommandLine({"inferscope", "--run"}, &error);
        QVERIFY(!plain.help && !plain.version && plain.run);
    }

    void unknownTabIsAnErrorThatListsThePanels() {
        QString error;
        parseCommandLine({"inferscope", "--tab", "no-such-panel"}, &error);
        QVERIFY(error.contains("no-such-panel"));
        for (const auto& id : panelIds()) QVERIFY2(error.contains(id), qPrintable(error));
        error.clear();
        auto ok = parseCommandLine({"inferscope", "--tab", "kv-cache"}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(ok.tab, QString("kv-cache"));
        parseCommandLine({"inferscope", "--no-such-option"}, &error);
        QVERIFY2(error.contains("no-such-option"), qPrintable(error));
    }

    void int8ActivationsIsAVulkanEngineOption() {
        QString error;
        auto unset = parseCommandLine({"inferscope", "--run"}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(!unset.int8Activations); // the window's saved choice stands
        auto on = parseCommandLine({"inferscope", "--int8-activations"}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(on.int8Activations, std::optional<bool>(true));
        auto off = parseCommandLine({"inferscope", "--no-int8-activations"}, &error);
        QCOMPARE(off.int8Activations, std::optional<bool>(false));
        parseCommandLine({"inferscope", "--int8-activations", "--backend", "cpu"}, &error);
        QVERIFY2(error.contains("Vulkan engine"), qPrintable(error));
        error.clear();
        parseCommandLine({"inferscope", "--int8-activations", "--no-int8-activations"}, &error);
        QVERIFY2(error.contains("contradict"), qPrintable(error));
    }

    void tabIdsAreTheWindowsPanels() {
        MainWindow window(cpuBackendFactory());
        QStringList ids;
        for (auto* panel : window.panels()) ids << panel->panelId();
        QCOMPARE(panelIds(), ids);
    }

    void executableAnswersHelpWithoutADisplay() {
        QVERIFY2(!windowExecutable().isEmpty(), "build the inferscope target first");
        auto help = runWindow({"--help"}, withoutDisplay());
        QVERIFY2(help.status == 0, qPrintable(help.err));
        QVERIFY2(help.out.contains("--screenshot") && help.out.contains("Usage"),
                 qPrintable(help.out));
        auto version = runWindow({"--version"}, withoutDisplay());
        QCOMPARE(version.status, 0);
        QCOMPARE(version.out.trimmed(), QString("inferscope 0.1.0"));
    }

    // Issue 48 item 8: with no display at all, a bad option is named and exits 2 (it used to
    // abort in Qt's platform plugin, exit 134, before the command line was read).
    void executableNamesABadOptionWithoutADisplay() {
        QVERIFY2(!windowExecutable().isEmpty(), "build the inferscope target first");
        auto bogus = runWindow({"--bogus"}, withoutDisplay());
        QVERIFY2(bogus.status == 2,
                 qPrintable(QString("exit %1: %2").arg(bogus.status).arg(bogus.err)));
        QVERIFY2(bogus.err.contains("bogus") && !bogus.err.contains("platform plugin"),
                 qPrintable(bogus.err));
        auto tab = runWindow({"--tab", "no-such-panel"}, withoutDisplay());
        QCOMPARE(tab.status, 2);
        QVERIFY2(tab.err.contains("no-such-panel"), qPrintable(tab.err));
        auto scale = runWindow({"--scale", "9"}, withoutDisplay());
        QCOMPARE(scale.status, 2);
        QVERIFY2(scale.err.contains("--scale"), qPrintable(scale.err));
    }

    // Qt's own options stay QApplication's: the early check neither refuses nor keeps them.
    void qtOptionsAreLeftToQApplication() {
        const QStringList with = {"inferscope", "-platform", "offscreen", "--style=fusion",
                                  "-reverse",   "--run",     "--tab",     "kv-cache"};
        QCOMPARE(withoutQtOptions(with), (QStringList{"inferscope", "--run", "--tab", "kv-cache"}));
        QString error;
        auto options = parseCommandLine(withoutQtOptions(with), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(options.run);
        QCOMPARE(withoutQtOptions({"inferscope", "--bogus"}),
                 (QStringList{"inferscope", "--bogus"}));
    }

    void executableRefusesAnUnknownTab() {
        QVERIFY2(!windowExecutable().isEmpty(), "build the inferscope target first");
        auto env = withoutDisplay();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        auto refused = runWindow({"--tab", "no-such-panel", "--quit"}, env);
        QCOMPARE(refused.status, 2);
        QVERIFY2(refused.err.contains("no panel 'no-such-panel'") &&
                     refused.err.contains("schemes"),
                 qPrintable(refused.err));
    }
};

QTEST_MAIN(TestGuiCommandLine)
#include "test_gui_command_line.moc"
