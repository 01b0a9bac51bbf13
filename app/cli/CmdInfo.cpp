#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/ModelInfo.hpp"

namespace inferscope::cli {

int runInfo(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json"}, {}});
    if (a.positionals().size() != 1) throw UsageError("usage: info MODEL [--json]");
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    namespace ex = compute::experiments;
    printTables(out, {ex::modelInfo(model), ex::weightBytesByType(model),
                      ex::kvCacheBytes(model.config)},
                a.flag("--json"));
    return 0;
}

} // namespace inferscope::cli
