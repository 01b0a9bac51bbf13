#pragma once
// Runs inferscope-cli in process (cli::runCli) and keeps its status, stdout and stderr: the
// CLI tests drive the same entry point main() does.
#include "app/cli/Commands.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace inferscope::tests {

struct CliResult {
    int status = 0;
    std::string out, err;
};

inline CliResult runCli(std::vector<std::string> args) {
    args.insert(args.begin(), "inferscope-cli");
    std::ostringstream out, err;
    const int status = cli::runCli(args, out, err);
    return {status, out.str(), err.str()};
}

} // namespace inferscope::tests
