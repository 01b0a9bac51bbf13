#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "models/ModelError.hpp"
#include "models/formats/TextFile.hpp"

#include <functional>
#include <map>
#include <ostream>

namespace inferscope::cli {

namespace {

struct Command {
    const char* name;
    std::function<int(const CommandArgs&, std::ostream&)> run;
    const char* usage; // its lines of the usage text, as printed by "help" and on mistakes
    bool needsArguments = true;
};

const std::vector<Command>& commands() {
    static const std::vector<Command> all = {
        {"devices", runDevices,
         "  devices                          Vulkan devices and their properties\n", false},
        {"info", runInfo,
         "  info MODEL [--backend vulkan|cpu] [--device N] [--format F] [--json]\n"
         "       [--device-memory SIZE] [--host-memory SIZE]\n"
         "                                   architecture, parameters, bytes by type, KV bytes "
         "per token,\n"
         "                                   and the load footprint on the device and the host\n"},
        {"tokenize", runTokenize,
         "  tokenize MODEL TEXT [--no-special]\n"
         "                                   token ids, pieces and their bytes\n"},
        {"generate", runGenerate,
         "  generate MODEL -p PROMPT [-n N] [--greedy | --temp T --top-k K --top-p P --seed S]\n"
         "           [--repeat-penalty R] [--chat [--system TEXT]] [--no-cache] [--timings]\n"
         "           [--kv-cache] [--compare-cache]\n"
         "           [--backend vulkan|cpu] [--device N] [--format fp32|fp16|...]\n"
         "           [--int8-activations] [--device-memory SIZE] [--host-memory SIZE]\n"
         "                                   text, ids, prefill time and each decode step's "
         "time;\n"
         "                                   --timings: GPU time per kernel; --kv-cache: KV "
         "bytes\n"
         "                                   per step and layer; --compare-cache: the same run\n"
         "                                   cached vs uncached (a model that does not fit is\n"
         "                                   refused first)\n"},
        {"perplexity", runPerplexity,
         "  perplexity MODEL FILE [--ctx N] [--tokens N] [--backend vulkan|cpu]\n"
         "                                   perplexity of the model on a text file\n"},
        {"bench", runBench,
         "  bench MODEL [--formats fp16,q8_0] [--prompts 16,64,256,512] [--contexts 16,256,1024]\n"
         "        [--decode N] [--batches 1,4] [--repeats N] [--device N] [--int8-activations]\n"
         "                                   prompt and decode tokens/s, per-kernel time, probe\n"
         "                                   overhead, read bandwidth, dispatch floor and the\n"
         "                                   decode roofline; --int8-activations (vulkan, 4-bit\n"
         "                                   formats on lavapipe): activations rounded to 8 bits\n"
         "                                   per 32 columns, integer products, as llama.cpp's\n"
         "                                   CPU backend; --repeats N: the best of N timed runs\n"
         "                                   (the per-kernel table is of the first batch "
         "listed)\n"},
        {"attention", runAttention,
         "  attention [MODEL] [--lengths 256,512,1024,2048,4096] [--dim 64] [--repeats N]\n"
         "                                   one attention head, one step, uncached (n x n\n"
         "                                   scores) vs cached (1 x n): bytes and time\n",
         false},
        {"macs", runMacs,
         "  macs MODEL [-P 16] [-T 256] [--measure N] [--formula-only] [--format F]\n"
         "                                   multiply-accumulates cached vs uncached: formula,\n"
         "                                   the engine's counter, step times, peak memory\n"},
        {"softlabels", runSoftLabels,
         "  softlabels MODEL [-p PROMPT] [--top K] [--temp 1,2] [--scheme S,...|none] [--chat]\n"
         "                                   the next token's probabilities at temperature T\n"
         "                                   and each scheme's KL divergence from them\n"},
        {"speculative", runSpeculative,
         "  speculative MODEL [--draft S,...] [-g 2,4,8] [--target fp16|as-stored]\n"
         "              [--positions 144] [--tokens 64] [--temp T --seed S] [-p PROMPT]\n"
         "              [--no-chat] [--run-draft S] [--device N]\n"
         "                                   a quantized draft for the model: alpha and cost c\n"
         "                                   per scheme, the formula over g, real runs\n"},
        {"budget", runBudget,
         "  budget [MODEL] [--gpu 8,16,24,80] [--precision fp16,int8,int4] [--kv fp16|int8|int4]\n"
         "         [--context N] [--variant as-built|mha|mqa] [--reserve GIB] [--presets FILE]\n"
         "         [--no-presets] [--device N | --no-detect]\n"
         "                                   weights + KV per token x tokens <= device memory:\n"
         "                                   context tokens and users that fit, per model\n",
         false},
        {"batch", runBatch,
         "  batch MODEL [--batches 1,2,4,...,64] [--context C] [--steps N] [--format F]\n"
         "                                   batched decode: tokens/s and latency per B, the\n"
         "                                   knee, the roofline, batched vs alone tokens\n"},
        {"schedule", runSchedule,
         "  schedule MODEL [--slots N] [--requests N] [--seed S] [--mix FILE]\n"
         "           [--median M --longest L --total T] [--simulate N [--simulate-slots S]]\n"
         "           [--chunk-tokens K] [--prefix-requests N]\n"
         "                                   static vs continuous batching, run and simulated;\n"
         "                                   chunked prefill simulated; the KV block map;\n"
         "                                   prefix sharing with and without forkSequence\n"},
        {"synthesize", runSynthesize,
         "  synthesize SHAPE OUT.gguf [--type f16|q8_0|q4_1] [--layers N] [--seed S]\n"
         "                                   a GGUF of that model's shape (qwen2.5-0.5b,\n"
         "                                   qwen3-0.6b, gemma-3-270m, tiny-qwen3, tiny-gemma3,\n"
         "                                   tiny-phi3, tiny-smollm3), random weights and a BPE\n"
         "                                   tokenizer padded to its vocabulary; --safetensors\n"
         "                                   writes an HF folder instead\n"},
        {"report", runReport,
         "  report weights MODEL [--scheme S,...] [--matrix NAME]\n"
         "                                   quantization error of every projection matrix per "
         "scheme\n"
         "  report activations MODEL -p PROMPT [--chat] [--layer L] [--top K]\n"
         "                                   residual-stream outliers and INT8/INT4 levels used\n"
         "  report quality MODEL [--scheme S,...] [--text FILE] [--tokens N] [--battery "
         "FILE|none]\n"
         "                                   perplexity, factual battery and agreement per "
         "scheme\n"},
    };
    return all;
}

const char* kFooter =
    "\nMODEL is a GGUF file, a safetensors folder, or \"default\" (SmolLM2-135M-Instruct, "
    "placed\nby scripts/setup). FILE \"default\" is the corpus placed by set-up (the Book of "
    "Ruth, KJV).\nEvery command takes --json; 'inferscope-cli COMMAND --help' shows one "
    "command.\n";

void printUsage(std::ostream& out) {
    out << "inferscope-cli: measure why LLM inference is cheap or expensive.\n\n"
           "Usage: inferscope-cli COMMAND [ARGS] [--json]\n\nCommands:\n";
    for (const auto& command : commands()) out << command.usage;
    out << kFooter;
}

void printCommandUsage(std::ostream& out, const Command& command) {
    out << "Usage of inferscope-cli " << command.name << ":\n" << command.usage << kFooter;
}

const Command* findCommand(const std::string& name) {
    for (const auto& command : commands())
        if (name == command.name) return &command;
    return nullptr;
}

bool isHelp(const std::string& argument) {
    return argument == "help" || argument == "--help" || argument == "-h";
}

} // namespace

int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    if (argv.size() < 2) {
        // A mistake, not a request for help: the usage goes where errors go.
        printUsage(err);
        return 2;
    }
    if (isHelp(argv[1])) {
        if (argv.size() > 2) {
            if (const Command* command = findCommand(argv[2])) {
                printCommandUsage(out, *command);
                return 0;
            }
            err << "inferscope-cli: unknown command '" << argv[2] << "'\n";
            return 2;
        }
        printUsage(out);
        return 0;
    }
    const Command* command = findCommand(argv[1]);
    if (!command) {
        err << "inferscope-cli: unknown command '" << argv[1] << "' (try 'inferscope-cli help')\n";
        return 2;
    }
    // Run without the arguments it needs: its usage, as a mistake (stderr, status 2).
    if (argv.size() == 2 && command->needsArguments) {
        err << "inferscope-cli " << argv[1] << ": missing arguments\n";
        printCommandUsage(err, *command);
        return 2;
    }
    // "COMMAND --help" (or -h) right after the command: that command's usage.
    if (argv.size() > 2 && (argv[2] == "--help" || argv[2] == "-h")) {
        printCommandUsage(out, *command);
        return 0;
    }
    try {
        return command->run(CommandArgs(argv.begin() + 2, argv.end()), out);
    } catch (const UsageError& e) {
        err << "inferscope-cli " << argv[1] << ": " << e.what() << "\n";
        if (e.showUsage()) printCommandUsage(err, *command);
        return 2;
    } catch (const models::TextFileError& e) {
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
