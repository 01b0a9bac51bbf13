// `report weights` (chapter item 8) and `report activations` (items 9 and 10).
#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/CpuBackend.hpp"
#include "compute/experiments/ActivationReport.hpp"
#include "compute/experiments/QualityReport.hpp"
#include "compute/experiments/WeightReport.hpp"
#include "models/ChatTemplate.hpp"
#include "models/ReferenceTransformer.hpp"
#include "models/TextFile.hpp"
#include "models/Tokenizer.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>
#include <sstream>

namespace inferscope::cli {

namespace {

const char* kReportUsage =
    "usage: report weights MODEL [--scheme S[,S...]] [--matrix NAME] [--threads N] [--json]\n"
    "       report activations MODEL -p PROMPT [--chat] [--layer L] [--top K] [--json]\n"
    "       report quality MODEL [--scheme S[,S...]] [--text FILE] [--tokens N] [--ctx N]\n"
    "                            [--battery FILE|none] [--agreement N] [--json]";

std::vector<models::QuantSchemeSpec> parseSchemes(const std::string& list) {
    std::vector<models::QuantSchemeSpec> schemes;
    std::stringstream stream(list);
    std::string name;
    while (std::getline(stream, name, ',')) {
        if (name.empty()) continue;
        try {
            schemes.push_back(models::parseQuantScheme(name));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    if (schemes.empty()) throw UsageError("--scheme needs at least one scheme name");
    return schemes;
}

int reportWeights(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{"--scheme", "--matrix", "--threads"}, {"--json"}, {}});
    if (a.positionals().size() != 1) throw UsageError(kReportUsage);
    compute::experiments::WeightReportOptions options;
    if (auto list = a.value("--scheme")) options.schemes = parseSchemes(*list);
    options.matrix = a.value("--matrix");
    options.threads = static_cast<unsigned>(a.integer("--threads", 2, 1, 256));
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    if (options.matrix &&
        !compute::experiments::canonicalProjectionName(*options.matrix).has_value())
        throw UsageError("--matrix: '" + *options.matrix +
                         "' is not a projection matrix name (e.g. blk.12.ffn_down.weight)");
    printTables(out, compute::experiments::weightErrorReport(model, options), a.flag("--json"));
    return 0;
}

int reportActivations(const CommandArgs& args, std::ostream& out) {
    Arguments a(args,
                {{"--prompt", "--layer", "--top"}, {"--json", "--chat"}, {{"-p", "--prompt"}}});
    if (a.positionals().size() != 1) throw UsageError(kReportUsage);
    auto prompt = a.value("--prompt");
    if (!prompt) throw UsageError("missing -p PROMPT");
    auto model = loadModelArgument(a.positional(0, "MODEL"));
    compute::experiments::ActivationReportOptions options;
    if (a.value("--layer"))
        options.layer = static_cast<std::uint32_t>(
            a.integer("--layer", 0, 0, std::max<long long>(0, model.config.layers - 1)));
    options.topK = static_cast<std::uint32_t>(
        a.integer("--top", 4, 1, std::max<long long>(1, model.config.hiddenSize - 1)));

    models::Tokenizer tokenizer(model.tokenizer);
    std::string text = *prompt;
    if (a.flag("--chat"))
        text = models::formatChat(models::detectChatFormat(model.tokenizer), {{"user", *prompt}},
                                  true);
    const auto tokens = tokenizer.encode(text, true, true);
    if (tokens.empty()) throw UsageError("the prompt encodes to no tokens");
    if (model.config.contextLength && tokens.size() > model.config.contextLength)
        throw UsageError("the prompt is longer than the model's context");

    models::ReferenceTransformer transformer(model.config, models::dequantizeAll(model.weights));
    const auto recording = compute::experiments::recordResidualStream(transformer, tokens);
    nlohmann::json extra = nlohmann::json::object();
    extra["prompt_tokens"] = tokens.size();
    if (!a.flag("--json"))
        out << "residual stream of " << tokens.size() << " prompt tokens, " << model.config.layers
            << " layers x " << model.config.hiddenSize << " dimensions (CPU reference)\n\n";
    printTables(out, compute::experiments::activationReport(recording, options), a.flag("--json"),
                extra);
    return 0;
}

// The battery shipped in resources/: $INFERSCOPE_RESOURCES, ./resources, or the source tree
// next to the build folder that holds this executable (build-x/app/inferscope-cli).
std::filesystem::path defaultBatteryPath() {
    std::vector<std::filesystem::path> candidates;
    if (const char* dir = std::getenv("INFERSCOPE_RESOURCES")) candidates.emplace_back(dir);
    candidates.emplace_back("resources");
    std::error_code error;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) candidates.push_back(exe.parent_path().parent_path().parent_path() / "resources");
    for (const auto& dir : candidates)
        if (std::filesystem::exists(dir / "factual-battery.json", error))
            return dir / "factual-battery.json";
    throw UsageError("cannot find resources/factual-battery.json: pass --battery FILE");
}

int reportQuality(const CommandArgs& args, std::ostream& out) {
    Arguments a(
        args,
        {{"--scheme", "--text", "--tokens", "--ctx", "--battery", "--agreement"}, {"--json"}, {}});
    if (a.positionals().size() != 1) throw UsageError(kReportUsage);
    compute::experiments::QualityInputs inputs;
    if (auto list = a.value("--scheme")) inputs.schemes = parseSchemes(*list);
    inputs.context = static_cast<std::uint32_t>(a.integer("--ctx", 512, 4, 1 << 20));
    const auto tokenCount = static_cast<std::size_t>(a.integer("--tokens", 2048, 0, 1LL << 30));
    inputs.agreementTokens = static_cast<std::int32_t>(a.integer("--agreement", 144, 0, 1 << 20));
    const std::string batteryArgument = a.valueOr("--battery", "");
    compute::experiments::FactualBattery battery;
    if (batteryArgument != "none") {
        try {
            battery = compute::experiments::loadFactualBattery(
                batteryArgument.empty() ? defaultBatteryPath()
                                        : std::filesystem::path(batteryArgument));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }

    auto model = loadModelArgument(a.positional(0, "MODEL"));
    models::Tokenizer tokenizer(model.tokenizer);
    if (tokenCount > 0) {
        const std::filesystem::path file = a.valueOr("--text", "default") == "default"
                                               ? models::defaultCorpusPath()
                                               : std::filesystem::path(*a.value("--text"));
        inputs.perplexityTokens = tokenizer.encode(models::readTextFile(file), true, false);
        if (inputs.perplexityTokens.size() > tokenCount) inputs.perplexityTokens.resize(tokenCount);
        if (model.tokenizer.addBos) inputs.bosId = tokenizer.bos();
    }
    const auto format = models::detectChatFormat(model.tokenizer);
    for (const auto& question : battery.questions)
        inputs.battery.push_back(
            {tokenizer.encode(models::formatChat(format, {{"user", question.question}}, true), true,
                              true),
             question.accepted});
    inputs.maxNewTokens = battery.maxNewTokens;
    inputs.stopTokens = tokenizer.stopTokens();
    inputs.decode = [&](std::span<const std::int32_t> ids) { return tokenizer.decode(ids, true); };
    const bool json = a.flag("--json");
    inputs.progress = [&](const std::string& line) {
        if (!json) std::cerr << line << std::endl;
    };
    const auto tables = compute::experiments::qualityReport(
        model.weights, inputs, [&](models::ReferenceWeights weights) {
            auto reference = std::make_shared<const models::ReferenceTransformer>(
                model.config, std::move(weights));
            return std::unique_ptr<compute::DecoderBackend>(
                std::make_unique<compute::CpuBackend>(reference, true));
        });
    printTables(out, tables, json);
    return 0;
}

} // namespace

int runReport(const CommandArgs& args, std::ostream& out) {
    if (args.empty()) throw UsageError(kReportUsage);
    const CommandArgs rest(args.begin() + 1, args.end());
    try {
        if (args[0] == "weights") return reportWeights(rest, out);
        if (args[0] == "activations") return reportActivations(rest, out);
        if (args[0] == "quality") return reportQuality(rest, out);
    } catch (const std::invalid_argument& e) {
        // Bad --layer / --top / --matrix values found by the experiments themselves.
        throw UsageError(e.what());
    }
    throw UsageError("unknown report '" + args[0] + "' (weights, activations, quality)\n" +
                     kReportUsage);
}

} // namespace inferscope::cli
