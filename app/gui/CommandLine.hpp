#pragma once
// inferscope's command line, and the script it implies:
//   inferscope --model M --prompt P --run --export DIR --quit
// loads M, sets the prompt, generates, writes every panel's PNG/SVG/CSV/JSON into DIR and
// quits with status 0 (1 if any step failed), so it runs unattended (offscreen too).
#include <QObject>
#include <QString>
#include <QStringList>
#include <optional>

namespace inferscope::gui {

class MainWindow;

struct CommandLineOptions {
    QString model; // path or "default"
    std::optional<QString> prompt;
    std::optional<int> maxTokens;
    std::optional<bool> chat;
    std::optional<double> scale;
    QString backend;          // "cpu", "vulkan" or "vulkan:<device>"; empty: the window's choice
    QString tab;              // the panel (its id) to show, e.g. for --screenshot
    std::optional<int> layer; // the shared selection's layer, set once the run's data is in
    bool run = false;
    QString exportFolder;
    QString screenshot; // the whole window as PNG, when the steps above are done
    bool quit = false;

    bool scripted() const {
        return run || !exportFolder.isEmpty() || !screenshot.isEmpty() || quit;
    }
};

// Parses arguments (argv including the program name). On a usage error, error is set and
// nothing else is meaningful; --help and --version are answered by Qt and exit.
CommandLineOptions parseCommandLine(const QStringList& arguments, QString* error);

// Drives the window through the script; emits finished(exit status) once, and quits the
// application with it when options.quit.
class ScriptRunner : public QObject {
    Q_OBJECT
public:
    ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent = nullptr);
    void start();
    QStringList exportedFiles() const { return exported_; }

signals:
    void finished(int status);

private:
    void afterModel();
    void afterRun(bool ok);
    void finish(int status, const QString& message = {});

    MainWindow& window_;
    CommandLineOptions options_;
    QStringList exported_;
    bool done_ = false;
};

} // namespace inferscope::gui
