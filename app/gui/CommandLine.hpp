#pragma once
// inferscope's command line, and the script it implies:
//   inferscope --model M --prompt P --run --export DIR --quit
// loads M, sets the prompt, generates, writes every panel's PNG/SVG/CSV/JSON into DIR and
// quits with status 0 (1 if any step failed), so it runs unattended (offscreen too); the
// script itself is app/gui/ScriptRunner.
#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>

namespace inferscope::gui {

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
// argv without the options QApplication consumes itself (-platform NAME, -style NAME,
// -reverse ...), so the command line can be checked before a display is looked for.
QStringList withoutQtOptions(const QStringList& arguments);

} // namespace inferscope::gui
