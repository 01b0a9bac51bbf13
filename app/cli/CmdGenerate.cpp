#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/caching/CachingLab.hpp"
#include "compute/experiments/run/RunTables.hpp"
#include "compute/session/LabSession.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <ostream>

namespace inferscope::cli {

namespace {
OptionSpec generateOptions() {
    OptionSpec spec{{"--prompt", "-n", "--temp", "--top-k", "--top-p", "--seed", "--repeat-penalty",
                     "--system"},
                    {"--greedy", "--chat", "--json", "--timings", "--kv-cache", "--compare-cache",
                     "--no-warmup"},
                    {{"-p", "--prompt"}}};
    addBackendOptions(spec);
    addMemoryOptions(spec);
    return spec;
}
} // namespace

static int runGenerate(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, generateOptions());
    const BackendArguments backend = backendArguments(a);
    bool timings = a.flag("--timings");
    if (timings && !backend.vulkan())
        throw UsageError("--timings needs the vulkan backend (GPU timestamps)");
    const bool kvCache = a.flag("--kv-cache"), compareCache = a.flag("--compare-cache");
    if (compareCache && !backend.useCache)
        throw UsageError("--compare-cache runs with and without the cache; drop --no-cache");
    if (a.positionals().size() != 1)
        throw UsageError("usage: generate MODEL -p PROMPT [-n N] [options] (see help)");
    auto prompt = a.value("--prompt");
    if (!prompt) throw UsageError("missing -p PROMPT");
    bool sampled = a.value("--temp") || a.value("--top-k") || a.value("--top-p");
    if (a.flag("--greedy") && sampled)
        throw UsageError("--greedy cannot be combined with --temp/--top-k/--top-p");

    if (a.value("--system") && !a.flag("--chat"))
        throw UsageError("--system is the chat template's system turn: it needs --chat");

    compute::GenerationRequest request;
    request.prompt = *prompt;
    request.chat = a.flag("--chat");
    request.systemPrompt = a.valueOr("--system", "");
    request.collectActivations = false;
    request.recordResidualStream = false;
    request.kernelTimings = timings;
    request.maxNewTokens = static_cast<std::int32_t>(a.integer("-n", 32, 1, 100000));
    auto& sampling = request.sampling;
    sampling.greedy = !sampled;
    sampling.temperature = static_cast<float>(a.number("--temp", 0.8, 0.0, 100.0));
    sampling.topK = static_cast<std::int32_t>(a.integer("--top-k", 40, 0, 1 << 30));
    sampling.topP = static_cast<float>(a.number("--top-p", 0.95, 0.0, 1.0));
    sampling.seed = static_cast<std::uint64_t>(a.integer("--seed", 0, 0, 1LL << 62));
    sampling.repeatPenalty = static_cast<float>(a.number("--repeat-penalty", 1.0, 0.0, 100.0));
    if (sampling.repeatPenalty <= 0) throw UsageError("--repeat-penalty must be > 0");

    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.warmUp = !a.flag("--no-warmup");
    load.available = memoryAvailability(a);
    const auto loaded = session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    if (!backend.useCache) session.setCached(false);
    std::vector<std::int32_t> promptIds;
    try {
        promptIds = session.promptIds(request);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // an empty prompt, or one too long for the context
    }
    const auto& tokenizer = session.tokenizer();

    bool json = a.flag("--json");
    compute::GenerationEvents events;
    // The tokens' text comes from the model file: control characters (an escape sequence in
    // a hostile vocabulary) are escaped, line breaks kept.
    if (!json)
        events.text = [&](const std::string& text) {
            out << models::printableText(text, true) << std::flush;
        };
    const auto run = session.generate(request, events);
    const std::string backendName = session.backendName();
    const std::string generatedText = tokenizer.decode(run->generatedIds);

    // The tables the window's panels draw, from the same functions (one source per table).
    namespace ex = compute::experiments;
    std::vector<compute::Table> tables{ex::timingsTable(*run)};
    if (timings) tables.push_back(ex::kernelTimingsTable(*run));
    if (kvCache) {
        tables.push_back(ex::kvCacheGrowthTable(*run));
        auto perLayer = ex::kvCachePerLayerTable(*run);
        if (!perLayer.rows.empty()) tables.push_back(std::move(perLayer));
    }
    if (compareCache) {
        // The same prompt and token budget again, greedy, cached then uncached.
        compute::JobControl control;
        control.progress = [](const std::string& stage, int) {
            std::cerr << "generate: " << stage << "\n";
        };
        tables.push_back(
            ex::cachingComparisonTable(*ex::CachingLab::run(session, request, control)));
    }

    if (json) {
        nlohmann::json extra = {{"backend", backendName},
                                {"prompt", tokenizer.decode(promptIds)},
                                {"prompt_ids", promptIds},
                                {"generated_ids", run->generatedIds},
                                {"text", generatedText},
                                {"prefill_ms", run->prefillSeconds * 1e3},
                                {"decode_tokens_per_s", run->decodeTokensPerSecond()},
                                {"warmup_ms", loaded ? loaded->warmupSeconds * 1e3 : 0.0}};
        printTables(out, tables, true, extra);
        return 0;
    }
    out << "\n\nids:";
    for (auto id : run->generatedIds) out << ' ' << id;
    out << "\n\n";
    printTables(out, tables, false);
    if (loaded && loaded->warmupSeconds > 0) {
        char warmup[160];
        std::snprintf(warmup, sizeof warmup,
                      "warm-up after the load: %.1f ms, untimed (--no-warmup shows the cold "
                      "first run)\n",
                      loaded->warmupSeconds * 1e3);
        out << warmup;
    }
    return 0;
}

extern const CliCommand generateCommand{
    "generate",
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
    "                                   refused first)\n",
    runGenerate};

} // namespace inferscope::cli
