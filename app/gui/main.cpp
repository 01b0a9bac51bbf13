// inferscope: the window. See CommandLine.hpp for the unattended (--run --export --quit) use.
#include "app/gui/CommandLine.hpp"
#include "app/gui/MainWindow.hpp"
#include "app/gui/ScriptRunner.hpp"
#include "compute/HeapRelease.hpp"

#include <QApplication>
#include <cstdio>

namespace {
void nameApplication() {
    QCoreApplication::setOrganizationName("InferScope");
    QCoreApplication::setApplicationName("inferscope");
    QCoreApplication::setApplicationVersion("0.1.0");
}
} // namespace

int main(int argc, char** argv) {
    using namespace inferscope::gui;
    inferscope::compute::giveLargeBlocksTheirOwnPages();
    // The whole command line is checked before QApplication looks for a display, so a bad
    // option is named (exit 2) and --help/--version answer on a terminal without one; only
    // Qt's own options (-platform ...) are left for QApplication to take.
    CommandLineOptions options;
    {
        QCoreApplication core(argc, argv);
        nameApplication();
        QString error;
        options = parseCommandLine(withoutQtOptions(QCoreApplication::arguments()), &error);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "inferscope: %s\n", qPrintable(error));
            return 2;
        }
        if (options.help || options.version) {
            std::fputs(qPrintable(options.text), stdout);
            return 0;
        }
    }
    // A scripted run on a machine without a display draws offscreen instead of failing.
    if (options.quit && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    nameApplication();

    MainWindow window;
    if (options.quit) window.setProperty("headless", true);
    window.show();
    ScriptRunner script(window, options);
    if (options.model.isEmpty()) window.restoreModel();
    if (options.scripted() || !options.model.isEmpty() || options.prompt || options.scale)
        script.start();
    return QApplication::exec();
}
