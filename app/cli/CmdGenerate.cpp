#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/Generation.hpp"
#include "compute/VulkanBackend.hpp"
#include "models/ChatTemplate.hpp"
#include "models/Tokenizer.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <ostream>

namespace inferscope::cli {

namespace {
OptionSpec generateOptions() {
    OptionSpec spec{
        {"--prompt", "-n", "--temp", "--top-k", "--top-p", "--seed", "--repeat-penalty",
         "--system"},
        {"--greedy", "--chat", "--json", "--timings"},
        {{"-p", "--prompt"}}};
    addBackendOptions(spec);
    return spec;
}

// Sums per-kernel GPU times over the decode steps (profiling mode).
void accumulateKernels(std::vector<compute::KernelTime>& total,
                       const std::vector<compute::KernelTime>& step) {
    for (const auto& k : step) {
        auto found = std::find_if(total.begin(), total.end(),
                                  [&](const auto& t) { return t.kernel == k.kernel; });
        if (found == total.end()) total.push_back(k);
        else {
            found->dispatches += k.dispatches;
            found->microseconds += k.microseconds;
        }
    }
}
} // namespace

int runGenerate(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, generateOptions());
    BackendChoice choice = backendChoice(a);
    bool timings = a.flag("--timings");
    if (timings && choice.backend != "vulkan")
        throw UsageError("--timings needs the vulkan backend (GPU timestamps)");
    choice.engine.probes.kernelTimings = timings;
    if (a.positionals().size() != 1)
        throw UsageError("usage: generate MODEL -p PROMPT [-n N] [options] (see help)");
    auto prompt = a.value("--prompt");
    if (!prompt) throw UsageError("missing -p PROMPT");
    bool sampled = a.value("--temp") || a.value("--top-k") || a.value("--top-p");
    if (a.flag("--greedy") && sampled)
        throw UsageError("--greedy cannot be combined with --temp/--top-k/--top-p");

    compute::GenerationOptions options;
    options.maxNewTokens = static_cast<std::int32_t>(a.integer("-n", 32, 1, 100000));
    options.sampling.greedy = !sampled;
    options.sampling.temperature = static_cast<float>(a.number("--temp", 0.8, 0.0, 100.0));
    options.sampling.topK = static_cast<std::int32_t>(a.integer("--top-k", 40, 0, 1 << 30));
    options.sampling.topP = static_cast<float>(a.number("--top-p", 0.95, 0.0, 1.0));
    options.sampling.seed = static_cast<std::uint64_t>(a.integer("--seed", 0, 0, 1LL << 62));
    options.sampling.repeatPenalty =
        static_cast<float>(a.number("--repeat-penalty", 1.0, 0.0, 100.0));
    if (options.sampling.repeatPenalty <= 0) throw UsageError("--repeat-penalty must be > 0");

    auto model = loadModelArgument(a.positional(0, "MODEL"));
    models::Tokenizer tokenizer(model.tokenizer);
    std::string text = *prompt;
    if (a.flag("--chat")) {
        std::vector<models::ChatMessage> messages;
        if (auto system = a.value("--system")) messages.push_back({"system", *system});
        messages.push_back({"user", *prompt});
        text = models::formatChat(models::detectChatFormat(model.tokenizer), messages, true);
    }
    auto promptIds = tokenizer.encode(text, true, true);
    if (promptIds.empty()) throw UsageError("the prompt encodes to no tokens");
    if (promptIds.size() + options.maxNewTokens > model.config.contextLength &&
        model.config.contextLength > 0)
        throw UsageError("prompt (" + std::to_string(promptIds.size()) + " tokens) + -n exceeds "
                         "the model's context of " + std::to_string(model.config.contextLength));
    options.stopTokens = tokenizer.stopTokens();

    bool json = a.flag("--json");
    auto backend = makeBackend(model, choice);
    auto* vulkan = dynamic_cast<compute::VulkanBackend*>(backend.get());
    std::vector<compute::KernelTime> prefillKernels, decodeKernels;
    auto result = compute::generate(*backend, promptIds, options, [&](std::size_t index, std::int32_t id) {
        if (!json) out << tokenizer.pieceBytes(id) << std::flush;
        // The probes of the step that produced this token's logits.
        if (timings && vulkan)
            accumulateKernels(index == 0 ? prefillKernels : decodeKernels,
                              vulkan->lastProbes().kernels);
    });
    std::string generatedText = tokenizer.decode(result.generatedIds);

    compute::Table steps;
    steps.id = "decode-steps";
    steps.title = "Timings (" + backend->name() + ")";
    steps.addColumn("step").addColumn("tokens in").addColumn("time", "ms", 3);
    steps.addRow({std::string("prefill"), static_cast<std::int64_t>(promptIds.size()),
                  result.prefillSeconds * 1e3});
    for (std::size_t i = 0; i < result.stepSeconds.size(); ++i)
        steps.addRow({"decode " + std::to_string(i + 1), std::int64_t{1},
                      result.stepSeconds[i] * 1e3});
    double decodeTotal = std::accumulate(result.stepSeconds.begin(), result.stepSeconds.end(), 0.0);
    char summary[200];
    std::snprintf(summary, sizeof summary,
                  "time to first token %.1f ms; prefill %.1f tokens/s; decode %.2f tokens/s "
                  "(%zu steps, %.1f ms)",
                  result.prefillSeconds * 1e3,
                  static_cast<double>(promptIds.size()) / result.prefillSeconds,
                  result.decodeTokensPerSecond(), result.stepSeconds.size(), decodeTotal * 1e3);
    steps.notes.push_back(summary);

    std::vector<compute::Table> tables{steps};
    if (timings) {
        std::size_t decodeSteps = result.stepSeconds.size();
        compute::Table kernels;
        kernels.id = "kernel-times";
        kernels.title = "GPU time per kernel (timestamps; profiling serializes the work)";
        kernels.addColumn("kernel").addColumn("prefill dispatches").addColumn("prefill", "us", 1)
            .addColumn("decode dispatches per step").addColumn("decode per step", "us", 1);
        for (const auto& k : prefillKernels) {
            auto d = std::find_if(decodeKernels.begin(), decodeKernels.end(),
                                  [&](const auto& t) { return t.kernel == k.kernel; });
            bool hasDecode = d != decodeKernels.end() && decodeSteps > 0;
            kernels.addRow({k.kernel, static_cast<std::int64_t>(k.dispatches), k.microseconds,
                            hasDecode ? compute::Cell(static_cast<std::int64_t>(d->dispatches / decodeSteps))
                                      : compute::Cell{},
                            hasDecode ? compute::Cell(d->microseconds / double(decodeSteps))
                                      : compute::Cell{}});
        }
        tables.push_back(std::move(kernels));
    }

    if (json) {
        nlohmann::json extra = {{"backend", backend->name()},
                                {"prompt", text},
                                {"prompt_ids", promptIds},
                                {"generated_ids", result.generatedIds},
                                {"text", generatedText},
                                {"prefill_ms", result.prefillSeconds * 1e3},
                                {"decode_tokens_per_s", result.decodeTokensPerSecond()}};
        printTables(out, tables, true, extra);
        return 0;
    }
    out << "\n\nids:";
    for (auto id : result.generatedIds) out << ' ' << id;
    out << "\n\n";
    printTables(out, tables, false);
    return 0;
}

} // namespace inferscope::cli
