// The one list of panels (app/gui/PanelRegistry) is what the window, the command line and the
// export follow: every registered panel is built into the deck under its group with its id, is
// reachable by --tab and from the View menu, is written by the export (PNG and SVG at least),
// and names an inferscope-cli command that exists and prints its tables. A panel added to the
// registry without any of these fails here.
#include "app/cli/Commands.hpp"
#include "app/gui/CommandLine.hpp"
#include "app/gui/MainWindow.hpp"
#include "app/gui/PanelRegistry.hpp"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace inferscope;
using namespace inferscope::gui;

class PanelRegistryTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true); // settings go to a test location
        QCoreApplication::setOrganizationName("InferScope");
        QCoreApplication::setApplicationName("inferscope-registry-test");
    }

    void everyPanelHasATabAnExportAndACliCommand() {
        MainWindow window(cpuBackendFactory());
        window.setProperty("headless", true);
        const auto& registry = panelRegistry();
        QVERIFY(!registry.isEmpty());
        QSet<QString> ids;
        QTemporaryDir out;
        QString error;
        const auto files = window.exportAll(out.path(), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QStringList menuEntries;
        for (auto* menu : window.menuBar()->findChildren<QMenu*>())
            for (auto* action : menu->actions()) menuEntries << action->text();

        for (const auto& spec : registry) {
            const auto id = qPrintable(spec.id);
            QVERIFY2(!ids.contains(spec.id), id);
            ids.insert(spec.id);
            // Built into the deck under its id and group.
            auto* panel = window.panel(spec.id);
            QVERIFY2(panel, id);
            QCOMPARE(panel->panelId(), spec.id);
            QVERIFY2(panelGroups().contains(spec.group), id);
            bool grouped = false;
            for (const auto& group : window.panelDeck()->groups())
                grouped |= group.label == spec.group && group.panelIds.contains(spec.id);
            QVERIFY2(grouped, id);
            // --tab finds it, and so does the View menu.
            QString parseError;
            const auto options =
                parseCommandLine({"inferscope", "--tab", spec.id, "--quit"}, &parseError);
            QVERIFY2(parseError.isEmpty(), qPrintable(parseError));
            QCOMPARE(options.tab, spec.id);
            QVERIFY2(window.panelDeck()->showPanel(spec.id), id);
            QCOMPARE(window.panelDeck()->currentPanel()->panelId(), spec.id);
            QVERIFY2(menuEntries.contains(panel->title()), id);
            // Exported: the chart as PNG and SVG whatever it holds (CSV/JSON once it has data).
            for (const char* extension : {".png", ".svg"})
                QVERIFY2(files.contains(out.filePath(spec.id + extension)),
                         qPrintable(spec.id + extension));
            // The CLI prints the same tables.
            QVERIFY2(!spec.cliCommand.isEmpty(), id);
            QVERIFY2(cli::findCliCommand(spec.cliCommand.toStdString()),
                     qPrintable(spec.id + ": no inferscope-cli command " + spec.cliCommand));
        }
        // The deck holds the registry's panels and nothing else, in its order.
        QCOMPARE(registeredPanelIds().size(), window.panels().size());
        for (qsizetype i = 0; i < window.panels().size(); ++i)
            QCOMPARE(window.panels()[i]->panelId(), registeredPanelIds()[i]);
        QCOMPARE(panelIds(), registeredPanelIds()); // what --tab accepts
    }
};

QTEST_MAIN(PanelRegistryTest)
#include "test_gui_panel_registry.moc"
