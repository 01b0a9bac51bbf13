#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/Bench.hpp"
#include "compute/experiments/CacheSavings.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>

namespace inferscope::cli {

int runMacs(const CommandArgs& args, std::ostream& out) {
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
    namespace ex = compute::experiments;

    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.buildBackend = !a.flag("--formula-only");
    std::cerr << "macs: loading the model…\n";
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    const auto& config = session.model().config;
    if (config.contextLength > 0 && prompt + generated > config.contextLength)
        throw UsageError("-P " + std::to_string(prompt) + " plus -T " + std::to_string(generated) +
                         " exceed the model's context of " + std::to_string(config.contextLength));
    std::vector<compute::Table> tables{
        ex::macGrowthTable(config, prompt, ex::doublingCounts(generated))};
    if (!a.flag("--formula-only")) {
        compute::GenerationRequest request;
        request.promptTokenIds = compute::benchPrompt(prompt, config.vocabSize);
        request.maxNewTokens = static_cast<std::int32_t>(measured);
        request.collectActivations = false;
        request.recordResidualStream = false;
        compute::JobControl control;
        control.progress = [](const std::string& stage, int) {
            std::cerr << "macs: " << stage << "\n";
        };
        const auto run = session.compareCaching(request, control);
        tables.push_back(ex::macCounterTable(config, *run));
        if (run->cachedPeak) tables.push_back(ex::peakMemoryTable(config, *run));
        if (!ex::macCounterAgrees(config, *run)) {
            printTables(out, tables, a.flag("--json"));
            throw std::runtime_error("the engine's operation counter disagrees with the formula");
        }
    }
    printTables(out, tables, a.flag("--json"));
    return 0;
}

} // namespace inferscope::cli
