#pragma once
// The subcommands of inferscope-cli. Each takes its arguments (after the subcommand name)
// and the output stream; returns the exit status. Errors are thrown (UsageError for bad
// arguments, ModelError for bad files, std::runtime_error otherwise) and main prints them
// as one line on stderr.
#include <iosfwd>
#include <string>
#include <vector>

namespace inferscope::cli {

using CommandArgs = std::vector<std::string>;

int runInfo(const CommandArgs& args, std::ostream& out);
int runTokenize(const CommandArgs& args, std::ostream& out);
int runGenerate(const CommandArgs& args, std::ostream& out);
int runPerplexity(const CommandArgs& args, std::ostream& out);
int runReport(const CommandArgs& args, std::ostream& out);
int runDevices(const CommandArgs& args, std::ostream& out);
int runBench(const CommandArgs& args, std::ostream& out);
int runBudget(const CommandArgs& args, std::ostream& out);
int runMacs(const CommandArgs& args, std::ostream& out);
int runAttention(const CommandArgs& args, std::ostream& out);
int runSoftLabels(const CommandArgs& args, std::ostream& out);
int runSpeculative(const CommandArgs& args, std::ostream& out);
int runBatch(const CommandArgs& args, std::ostream& out);
int runSchedule(const CommandArgs& args, std::ostream& out);
int runSynthesize(const CommandArgs& args, std::ostream& out);

// Dispatches argv[1] to a command; prints usage for "help" or no arguments.
int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

} // namespace inferscope::cli
