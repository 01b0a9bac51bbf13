#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/session/LabSession.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <ostream>

namespace inferscope::cli {

namespace {
OptionSpec generateOptions() {
    OptionSpec spec{{"--prompt", "-n", "--temp", "--top-k", "--top-p", "--seed", "--repeat-penalty",
                     "--system"},
                    {"--greedy", "--chat", "--json", "--timings", "--no-warmup"},
                    {{"-p", "--prompt"}}};
    addBackendOptions(spec);
    addMemoryOptions(spec);
    return spec;
}
} // namespace

int runGenerate(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, generateOptions());
    const BackendArguments backend = backendArguments(a);
    bool timings = a.flag("--timings");
    if (timings && !backend.vulkan())
        throw UsageError("--timings needs the vulkan backend (GPU timestamps)");
    if (a.positionals().size() != 1)
        throw UsageError("usage: generate MODEL -p PROMPT [-n N] [options] (see help)");
    auto prompt = a.value("--prompt");
    if (!prompt) throw UsageError("missing -p PROMPT");
    bool sampled = a.value("--temp") || a.value("--top-k") || a.value("--top-p");
    if (a.flag("--greedy") && sampled)
        throw UsageError("--greedy cannot be combined with --temp/--top-k/--top-p");

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
    if (!json) events.text = [&](const std::string& text) { out << text << std::flush; };
    const auto run = session.generate(request, events);
    const std::string backendName = session.backendName();
    const std::string generatedText = tokenizer.decode(run->generatedIds);

    compute::Table steps;
    steps.id = "decode-steps";
    steps.title = "Timings (" + backendName + ")";
    steps.addColumn("step").addColumn("tokens in").addColumn("time", "ms", 3);
    steps.addRow({std::string("prefill"), static_cast<std::int64_t>(promptIds.size()),
                  run->prefillSeconds * 1e3});
    for (std::size_t i = 0; i < run->stepSeconds.size(); ++i)
        steps.addRow(
            {"decode " + std::to_string(i + 1), std::int64_t{1}, run->stepSeconds[i] * 1e3});
    double decodeTotal = std::accumulate(run->stepSeconds.begin(), run->stepSeconds.end(), 0.0);
    char summary[200];
    std::snprintf(summary, sizeof summary,
                  "time to first token %.1f ms; prefill %.1f tokens/s; decode %.2f tokens/s "
                  "(%zu steps, %.1f ms)",
                  run->prefillSeconds * 1e3, run->prefillTokensPerSecond(),
                  run->decodeTokensPerSecond(), run->stepSeconds.size(), decodeTotal * 1e3);
    steps.notes.push_back(summary);
    if (loaded && loaded->warmupSeconds > 0) {
        std::snprintf(summary, sizeof summary,
                      "pipelines warmed after the load by an untimed run (%.1f ms, not counted "
                      "here; --no-warmup shows the cold first run)",
                      loaded->warmupSeconds * 1e3);
        steps.notes.push_back(summary);
    }

    std::vector<compute::Table> tables{steps};
    if (timings) {
        std::size_t decodeSteps = run->stepSeconds.size();
        compute::Table kernels;
        kernels.id = "kernel-times";
        kernels.title = "GPU time per kernel (timestamps; profiling serializes the work)";
        kernels.addColumn("kernel")
            .addColumn("prefill dispatches")
            .addColumn("prefill", "us", 1)
            .addColumn("decode dispatches per step")
            .addColumn("decode per step", "us", 1);
        const auto& decodeKernels = run->decodeKernelsTotal;
        for (const auto& k : run->prefillKernels) {
            auto d = std::find_if(decodeKernels.begin(), decodeKernels.end(),
                                  [&](const auto& t) { return t.kernel == k.kernel; });
            bool hasDecode = d != decodeKernels.end() && decodeSteps > 0;
            kernels.addRow(
                {k.kernel, static_cast<std::int64_t>(k.dispatches), k.microseconds,
                 hasDecode ? compute::Cell(static_cast<std::int64_t>(d->dispatches / decodeSteps))
                           : compute::Cell{},
                 hasDecode ? compute::Cell(d->microseconds / double(decodeSteps))
                           : compute::Cell{}});
        }
        tables.push_back(std::move(kernels));
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
    return 0;
}

} // namespace inferscope::cli
