#pragma once
// The subcommands of inferscope-cli. Each CmdX.cpp defines one CliCommand beside its code: its
// name, its lines of the usage text and the function that runs it (arguments after the command
// name, the output stream; returns the exit status). RunCli.cpp holds the one list of them, a
// line per command. Errors are thrown (UsageError for bad arguments, ModelError for bad files,
// std::runtime_error otherwise) and runCli prints them as one line on stderr.
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::cli {

using CommandArgs = std::vector<std::string>;

struct CliCommand {
    std::string_view name;
    std::string_view usage; // its lines of the usage text, as "help" prints them
    int (*run)(const CommandArgs& args, std::ostream& out);
    bool needsArguments = true; // run without arguments: its usage, as a mistake
};

// Every command, in the order "help" lists them.
std::span<const CliCommand* const> cliCommands();
const CliCommand* findCliCommand(std::string_view name);

// Dispatches argv[1] to a command; prints usage for "help" or no arguments.
int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

} // namespace inferscope::cli
