#pragma once
// Drives the window through the script the command line implies (app/gui/CommandLine): loads
// the model, then with --run a profiled two-token run (kernel timings; it also warms the
// pipelines) and the run itself, and with --export the short scripted job of every panel that
// has one, in the registry's order (panels whose job needs the GPU engine only on a Vulkan
// backend), then every panel's PNG/SVG/CSV/JSON. A panel still empty then is left out of the
// export, with its reason on stderr. Emits finished(exit status) once, and quits the
// application with it when options.quit.
#include "app/gui/CommandLine.hpp"

#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

namespace inferscope::gui {

class MainWindow;

class ScriptRunner : public QObject {
    Q_OBJECT
public:
    static constexpr int kProfiledTokens = 2;

    ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent = nullptr);
    void start();
    QStringList exportedFiles() const { return exported_; }
    // Panel id -> why it was left out of the export.
    QMap<QString, QString> leftOut() const { return leftOut_; }

signals:
    void finished(int status);

private:
    // A step starts something and says whether it did; stepFinished ends it.
    struct Step {
        QString what; // for the failure message
        std::function<bool()> start;
    };
    void afterModel();
    void runNextStep();
    void stepFinished(bool ok, const QString& error = {});
    void watchLabJobs();
    void afterSteps();
    bool exportPanels();
    void finish(int status, const QString& message = {});

    MainWindow& window_;
    CommandLineOptions options_;
    QList<Step> steps_;
    bool stepRunning_ = false;
    quint64 labJob_ = 0; // the panel job the current step waits for
    bool savedProfile_ = false;
    int savedMaxTokens_ = 0;
    bool ran_ = false;
    QStringList exported_;
    QMap<QString, QString> leftOut_;
    bool done_ = false;
};

} // namespace inferscope::gui
