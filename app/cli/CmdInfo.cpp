#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/ModelInfo.hpp"

namespace inferscope::cli {

int runInfo(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{}, {"--json"}, {}});
    a.requirePositionals({"MODEL"});
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    // loadModel has built the tokenizer once to check it, so info refuses the tokenizers
    // that generate refuses (merges naming missing tokens, an unknown pre-tokenizer, ...).
    namespace ex = compute::experiments;
    printTables(
        out, {ex::modelInfo(model), ex::weightBytesByType(model), ex::kvCacheBytes(model.config)},
        a.flag("--json"));
    return 0;
}

} // namespace inferscope::cli
