#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/run/ModelInfo.hpp"
#include "compute/session/LoadFootprint.hpp"

namespace inferscope::cli {

static int runInfo(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--backend", "--device", "--format"}, {"--json"}, {}};
    addMemoryOptions(spec);
    Arguments a(args, spec);
    a.requirePositionals({"MODEL"});
    const BackendArguments backend = backendArguments(a);
    const auto available = memoryAvailability(a);
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    // loadModel has built the tokenizer once to check it, so info refuses the tokenizers
    // that generate refuses (merges naming missing tokens, an unknown pre-tokenizer, ...).
    namespace ex = compute::experiments;
    compute::LoadFootprint footprint;
    std::string fallback;
    try {
        footprint = compute::estimateLoadFootprint(model, backend.choice, available);
    } catch (const compute::ComputeError& e) {
        // Without a Vulkan device the default (vulkan) still gets a card: the CPU reference's.
        if (a.value("--backend")) throw;
        fallback =
            std::string("No Vulkan device (") + e.what() + "): the CPU reference's footprint.";
        compute::BackendChoice cpu;
        footprint = compute::estimateLoadFootprint(model, cpu, available);
    }
    auto footprintTable = compute::loadFootprintTable(footprint);
    if (!fallback.empty()) footprintTable.notes.insert(footprintTable.notes.begin(), fallback);
    printTables(out,
                {ex::modelInfo(model), ex::weightBytesByType(model), ex::kvCacheBytes(model.config),
                 footprintTable},
                a.flag("--json"));
    return 0;
}

extern const CliCommand infoCommand{
    "info",
    "  info MODEL [--backend vulkan|cpu] [--device N] [--format F] [--json]\n"
    "       [--device-memory SIZE] [--host-memory SIZE]\n"
    "                                   architecture, parameters, bytes by type, KV bytes "
    "per token,\n"
    "                                   and the load footprint on the device and the host\n",
    runInfo};

} // namespace inferscope::cli
