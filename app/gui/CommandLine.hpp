#pragma once
// inferscope's command line, and the script it implies:
//   inferscope --model M --prompt P --run --export DIR --quit
// loads M, sets the prompt, generates, writes every panel's PNG/SVG/CSV/JSON into DIR and
// quits with status 0 (1 if any step failed), so it runs unattended (offscreen too).
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>

namespace inferscope::gui {

class MainWindow;

struct CommandLineOptions {
    QString model; // path or "default"
    std::optional<QString> prompt;
    std::optional<int> maxTokens;
    std::optional<bool> chat;
    std::optional<double> scale;
    QString backend; // "cpu", "vulkan" or "vulkan:<device>"; empty: the window's choice
    std::optional<bool> int8Activations; // --int8-activations / --no-...; unset: the window's
    QString tab;                         // the panel (its id) to show, e.g. for --screenshot
    std::optional<int> layer; // the shared selection's layer, set once the run's data is in
    bool run = false;
    QString exportFolder;
    QString screenshot; // the whole window as PNG, when the steps above are done
    bool quit = false;
    // --help / --version: print text and exit 0, before any window exists.
    bool help = false, version = false;
    QString text; // the help or version text to print

    bool scripted() const {
        return run || !exportFolder.isEmpty() || !screenshot.isEmpty() || quit;
    }
};

// Parses arguments (argv including the program name). On a usage error, error is set and
// nothing else is meaningful. --help and --version set help / version and text (the caller
// prints it and exits 0). Needs a QCoreApplication (for the help text's program name), not
// a QApplication, so it answers without a display.
CommandLineOptions parseCommandLine(const QStringList& arguments, QString* error);

// The panel ids --tab accepts, in the window's tab order.
QStringList panelIds();
// Whether argv asks only for --help/--version (answered before a display is needed).
bool asksForHelpOrVersion(int argc, char** argv);

// Drives the window through the script; emits finished(exit status) once, and quits the
// application with it when options.quit. With --run and --export it fills every panel it
// can before exporting: a profiled two-token run (kernel timings; it also warms the
// pipelines), the run itself, a short cached-vs-uncached comparison, the weight-error
// report, the soft labels and, on the GPU engine, a short speculative study (two drafts,
// kScriptSpeculativePositions positions), a short batching sweep (B up to
// kScriptLargestBatch) and the quick request mix on kScriptSlots slots. A panel still empty then is
// left out of the export, with the reason on stderr.
class ScriptRunner : public QObject {
    Q_OBJECT
public:
    static constexpr int kProfiledTokens = 2;
    static constexpr int kComparisonTokens = 6;
    static constexpr int kScriptLargestBatch = 16;
    static constexpr int kScriptSweepSteps = 4;
    static constexpr int kScriptSlots = 4;
    static constexpr int kScriptSpeculativePositions = 48;
    static constexpr int kScriptSpeculativeTokens = 24;

    ScriptRunner(MainWindow& window, CommandLineOptions options, QObject* parent = nullptr);
    void start();
    QStringList exportedFiles() const { return exported_; }
    // Panel id -> why it was left out of the export.
    QMap<QString, QString> leftOut() const { return leftOut_; }

signals:
    void finished(int status);

private:
    enum class Step {
        ProfiledRun,
        Run,
        Comparison,
        WeightReport,
        AttentionHead,
        SoftLabels,
        Speculative,
        Batching,
        Scheduler
    };
    // The scripted export times the single head up to this length (the panel goes to 4,096).
    static constexpr std::uint32_t kAttentionHeadMaxLength = 1024;
    void afterModel();
    void runNextStep();
    void stepFinished(bool ok, const QString& failure);
    void afterSteps();
    bool exportPanels();
    void finish(int status, const QString& message = {});

    MainWindow& window_;
    CommandLineOptions options_;
    QList<Step> steps_;
    std::optional<Step> current_;
    bool savedProfile_ = false;
    int savedMaxTokens_ = 0;
    bool ran_ = false;
    QStringList exported_;
    QMap<QString, QString> leftOut_;
    bool done_ = false;
};

} // namespace inferscope::gui
