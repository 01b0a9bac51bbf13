#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "models/ModelError.hpp"
#include "models/formats/TextFile.hpp"

#include <ostream>

namespace inferscope::cli {

// The commands, in the order "help" lists them: one line here per command (its usage and
// code are in its own CmdX.cpp).
extern const CliCommand devicesCommand, infoCommand, tokenizeCommand, generateCommand,
    perplexityCommand, benchCommand, attentionCommand, macsCommand, softlabelsCommand,
    speculativeCommand, budgetCommand, batchCommand, scheduleCommand, synthesizeCommand,
    reportCommand, classReportCommand, serveCommand, replayCommand;
const CliCommand* const kCommands[] = {
    &devicesCommand,    &infoCommand,        &tokenizeCommand,  &generateCommand,
    &perplexityCommand, &benchCommand,       &attentionCommand, &macsCommand,
    &softlabelsCommand, &speculativeCommand, &budgetCommand,    &batchCommand,
    &scheduleCommand,   &synthesizeCommand,  &reportCommand,    &classReportCommand,
    &serveCommand,      &replayCommand,
};

std::span<const CliCommand* const> cliCommands() {
    return kCommands;
}

const CliCommand* findCliCommand(std::string_view name) {
    for (const auto* command : kCommands)
        if (command->name == name) return command;
    return nullptr;
}

namespace {

const char* kFooter =
    "\nMODEL is a GGUF file, a safetensors folder, or \"default\" (SmolLM2-135M-Instruct, "
    "placed\nby scripts/setup). FILE \"default\" is the corpus placed by set-up (the Book of "
    "Ruth, KJV).\nEvery command takes --json; 'inferscope-cli COMMAND --help' shows one "
    "command.\n";

void printUsage(std::ostream& out) {
    out << "inferscope-cli: measure why LLM inference is cheap or expensive.\n\n"
           "Usage: inferscope-cli COMMAND [ARGS] [--json]\n\nCommands:\n";
    for (const auto* command : kCommands) out << command->usage;
    out << kFooter;
}

void printCommandUsage(std::ostream& out, const CliCommand& command) {
    out << "Usage of inferscope-cli " << command.name << ":\n" << command.usage << kFooter;
}

bool isHelp(const std::string& argument) {
    return argument == "help" || argument == "--help" || argument == "-h";
}

} // namespace

int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    if (argv.size() < 2) {
        // A mistake, not a request for help: the usage goes where errors go.
        printUsage(err);
        return 2;
    }
    if (isHelp(argv[1])) {
        if (argv.size() > 2) {
            if (const CliCommand* command = findCliCommand(argv[2])) {
                printCommandUsage(out, *command);
                return 0;
            }
            err << "inferscope-cli: unknown command '" << argv[2] << "'\n";
            return 2;
        }
        printUsage(out);
        return 0;
    }
    const CliCommand* command = findCliCommand(argv[1]);
    if (!command) {
        err << "inferscope-cli: unknown command '" << argv[1] << "' (try 'inferscope-cli help')\n";
        return 2;
    }
    // Run without the arguments it needs: its usage, as a mistake (stderr, status 2).
    if (argv.size() == 2 && command->needsArguments) {
        err << "inferscope-cli " << argv[1] << ": missing arguments\n";
        printCommandUsage(err, *command);
        return 2;
    }
    // "COMMAND --help" (or -h) right after the command: that command's usage.
    if (argv.size() > 2 && (argv[2] == "--help" || argv[2] == "-h")) {
        printCommandUsage(out, *command);
        return 0;
    }
    try {
        return command->run(CommandArgs(argv.begin() + 2, argv.end()), out);
    } catch (const UsageError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        if (e.showUsage()) printCommandUsage(err, *command);
        return 2;
    } catch (const models::TextFileError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 2;
    } catch (const models::ModelError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace inferscope::cli
