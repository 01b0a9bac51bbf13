#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/caching/MacsLab.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>

namespace inferscope::cli {

static int runMacs(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"-P", "-T", "--measure"}, {"--json", "--formula-only"}, {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    if (a.positionals().size() != 1)
        throw UsageError("usage: macs MODEL [-P 16] [-T 256] [--measure N] [--formula-only] "
                         "[--json]",
                         true);
    const auto prompt = static_cast<std::uint32_t>(a.integer("-P", 16, 1, 1 << 20));
    const auto generated = static_cast<std::uint32_t>(a.integer("-T", 256, 1, 1 << 20));
    const auto measured = static_cast<std::uint32_t>(
        a.integer("--measure", std::min<std::uint32_t>(generated, 32), 1, generated));
    const BackendArguments backend = backendArguments(a);
    if (!backend.vulkan() && !a.flag("--formula-only"))
        throw UsageError("the measured counter is the Vulkan engine's: --backend cpu needs "
                         "--formula-only");
    namespace ex = compute::experiments;

    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.buildBackend = !a.flag("--formula-only");
    std::cerr << "macs: loading the model…\n";
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    ex::MacsRequest request;
    request.promptTokens = prompt;
    request.generatedTokens = generated;
    request.measuredTokens = measured;
    request.formulaOnly = a.flag("--formula-only");
    compute::JobControl control;
    control.progress = [](const std::string& stage, int) {
        std::cerr << "macs: " << stage << "\n";
    };
    ex::MacsResult result;
    try {
        result = ex::MacsLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const auto& tables = result.tables;
    if (!result.counterAgrees) {
        printTables(out, tables, a.flag("--json"));
        throw std::runtime_error("the engine's operation counter disagrees with the formula");
    }
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand macsCommand{
    "macs",
    "  macs MODEL [-P 16] [-T 256] [--measure N] [--formula-only] [--format F]\n"
    "                                   multiply-accumulates cached vs uncached: formula,\n"
    "                                   the engine's counter, step times, peak memory\n",
    runMacs};

} // namespace inferscope::cli
