#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/Generation.hpp"
#include "models/ChatTemplate.hpp"
#include "models/Tokenizer.hpp"

#include <nlohmann/json.hpp>
#include <numeric>
#include <ostream>

namespace inferscope::cli {

namespace {
const OptionSpec kGenerateOptions{
    {"--prompt", "-n", "--temp", "--top-k", "--top-p", "--seed", "--repeat-penalty", "--backend",
     "--system"},
    {"--greedy", "--chat", "--no-cache", "--json"},
    {{"-p", "--prompt"}}};
} // namespace

int runGenerate(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, kGenerateOptions);
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
    auto backend = makeBackend(model, a.valueOr("--backend", "cpu"), !a.flag("--no-cache"));
    auto result = compute::generate(*backend, promptIds, options, [&](std::size_t, std::int32_t id) {
        if (!json) out << tokenizer.pieceBytes(id) << std::flush;
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

    if (json) {
        nlohmann::json extra = {{"backend", backend->name()},
                                {"prompt", text},
                                {"prompt_ids", promptIds},
                                {"generated_ids", result.generatedIds},
                                {"text", generatedText},
                                {"prefill_ms", result.prefillSeconds * 1e3},
                                {"decode_tokens_per_s", result.decodeTokensPerSecond()}};
        printTables(out, {steps}, true, extra);
        return 0;
    }
    out << "\n\nids:";
    for (auto id : result.generatedIds) out << ' ' << id;
    out << "\n\n" << compute::renderText(steps);
    return 0;
}

} // namespace inferscope::cli
