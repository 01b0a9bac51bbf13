#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "models/ModelError.hpp"

#include <functional>
#include <map>
#include <ostream>

namespace inferscope::cli {

namespace {
const char* kUsage = R"(inferscope-cli: measure why LLM inference is cheap or expensive.

Usage: inferscope-cli COMMAND [ARGS] [--json]

Commands:
  devices                          Vulkan devices and their properties
  info MODEL                       architecture, parameters, bytes by type, KV bytes per token
  tokenize MODEL TEXT              token ids and pieces
  generate MODEL -p PROMPT [-n N] [--greedy | --temp T --top-k K --top-p P --seed S]
           [--repeat-penalty R] [--chat] [--no-cache] [--timings]
           [--backend vulkan|cpu] [--device N] [--format fp32|fp16|...]
                                   text, ids, prefill time and each decode step's time
  perplexity MODEL FILE [--ctx N] [--tokens N] [--backend vulkan|cpu]
                                   perplexity of the model on a text file
  bench MODEL [--formats fp16,q8_0] [--prompts 16,64,256,512] [--contexts 16,256,1024]
        [--decode N] [--batches 1,4] [--device N]
                                   prompt and decode tokens/s, per-kernel time, probe
                                   overhead, read bandwidth and the decode roofline
  report weights MODEL [--scheme S,...] [--matrix NAME]
                                   quantization error of every projection matrix per scheme
  report activations MODEL -p PROMPT [--chat] [--layer L] [--top K]
                                   residual-stream outliers and INT8/INT4 levels used
  report quality MODEL [--scheme S,...] [--text FILE] [--tokens N] [--battery FILE|none]
                                   perplexity, factual battery and agreement per scheme

MODEL is a GGUF file, a safetensors folder, or "default" (SmolLM2-135M-Instruct, placed
by scripts/setup). FILE "default" is the corpus placed by set-up (the Book of Ruth, KJV).
)";
} // namespace

int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    static const std::map<std::string, std::function<int(const CommandArgs&, std::ostream&)>>
        commands = {
            {"info", runInfo},
            {"devices", runDevices},
            {"bench", runBench},
            {"tokenize", runTokenize},
            {"generate", runGenerate},
            {"perplexity", runPerplexity},
            {"report", runReport},
        };
    if (argv.size() < 2 || argv[1] == "help" || argv[1] == "--help" || argv[1] == "-h") {
        out << kUsage;
        return argv.size() < 2 ? 2 : 0;
    }
    auto command = commands.find(argv[1]);
    if (command == commands.end()) {
        err << "inferscope-cli: unknown command '" << argv[1] << "' (try 'inferscope-cli help')\n";
        return 2;
    }
    try {
        return command->second(CommandArgs(argv.begin() + 2, argv.end()), out);
    } catch (const UsageError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 2;
    } catch (const models::ModelError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        return 1;
    }
}

} // namespace inferscope::cli
