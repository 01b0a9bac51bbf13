#include "app/cli/Commands.hpp"
#include "compute/HeapRelease.hpp"

#include <iostream>

int main(int argc, char** argv) {
    inferscope::compute::giveLargeBlocksTheirOwnPages();
    std::vector<std::string> args(argv, argv + argc);
    return inferscope::cli::runCli(args, std::cout, std::cerr);
}
