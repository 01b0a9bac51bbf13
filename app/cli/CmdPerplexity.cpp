#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/quantization/QuantizationLabs.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>

namespace inferscope::cli {

static int runPerplexity(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--ctx", "--tokens"}, {"--json", "--quiet"}, {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    const BackendArguments backend = backendArguments(a);
    a.requirePositionals({"MODEL", "FILE"});
    std::filesystem::path file = a.positional(1, "FILE") == "default"
                                     ? models::defaultCorpusPath()
                                     : std::filesystem::path(a.positional(1, "FILE"));
    auto context = static_cast<std::uint32_t>(a.integer("--ctx", 512, 4, 1 << 20));
    auto tokenLimit = static_cast<std::uint64_t>(a.integer("--tokens", 0, 0, 1LL << 40));
    // The lab session builds the backend (no warm-up: nothing here is timed per token).
    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.warmUp = false;
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    if (!backend.useCache) session.setCached(false);
    compute::experiments::PerplexityRequest request;
    request.text = file;
    request.context = context;
    request.tokenLimit = tokenLimit;
    const bool quiet = a.flag("--quiet") || a.flag("--json");
    compute::JobControl control;
    control.progress = [&](const std::string& stage, int) {
        if (!quiet) std::cerr << stage << "\n";
    };
    std::vector<compute::Table> tables;
    try {
        tables = compute::experiments::PerplexityLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // a context over the model's, a text too short
    }
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand perplexityCommand{
    "perplexity",
    "  perplexity MODEL FILE [--ctx N] [--tokens N] [--backend vulkan|cpu]\n"
    "                                   perplexity of the model on a text file\n",
    runPerplexity};

} // namespace inferscope::cli
