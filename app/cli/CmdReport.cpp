// `report weights` (chapter item 8) and `report activations` (items 9 and 10).
#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/quantization/QuantizationLabs.hpp"
#include "compute/session/LabSession.hpp"

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
    if (options.matrix &&
        !compute::experiments::canonicalProjectionName(*options.matrix).has_value())
        throw UsageError("--matrix: '" + *options.matrix +
                         "' is not a projection matrix name (e.g. blk.12.ffn_down.weight)");
    compute::LabSession session;
    compute::LoadOptions load;
    load.buildBackend = false;
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    printTables(out, compute::experiments::WeightReportLab::run(session, options, {}),
                a.flag("--json"));
    return 0;
}

int reportActivations(const CommandArgs& args, std::ostream& out) {
    Arguments a(args,
                {{"--prompt", "--layer", "--top"}, {"--json", "--chat"}, {{"-p", "--prompt"}}});
    if (a.positionals().size() != 1) throw UsageError(kReportUsage);
    auto prompt = a.value("--prompt");
    if (!prompt) throw UsageError("missing -p PROMPT");
    compute::LabSession
        session; // the model and tokenizer; the CPU reference (over the stored tensors) records
    compute::LoadOptions load;
    load.buildBackend = false;
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    const auto& model = session.model();
    compute::experiments::ActivationReportOptions options;
    if (a.value("--layer"))
        options.layer = static_cast<std::uint32_t>(
            a.integer("--layer", 0, 0, std::max<long long>(0, model.config.layers - 1)));
    options.topK = static_cast<std::uint32_t>(
        a.integer("--top", 4, 1, std::max<long long>(1, model.config.hiddenSize - 1)));

    compute::experiments::ActivationReportRequest request;
    request.prompt = *prompt;
    request.chat = a.flag("--chat");
    request.options = options;
    // std::invalid_argument (an empty prompt, no chat template): a usage error
    const auto report = compute::experiments::ActivationReportLab::run(session, request, {});
    nlohmann::json extra = nlohmann::json::object();
    extra["prompt_tokens"] = report.promptTokens;
    if (!a.flag("--json"))
        out << "residual stream of " << report.promptTokens << " prompt tokens, "
            << model.config.layers << " layers x " << model.config.hiddenSize
            << " dimensions (CPU reference)\n\n";
    printTables(out, report.tables, a.flag("--json"), extra);
    return 0;
}

int reportQuality(const CommandArgs& args, std::ostream& out) {
    Arguments a(
        args,
        {{"--scheme", "--text", "--tokens", "--ctx", "--battery", "--agreement"}, {"--json"}, {}});
    if (a.positionals().size() != 1) throw UsageError(kReportUsage);
    compute::experiments::QualityRequest request;
    if (auto list = a.value("--scheme")) request.schemes = parseSchemes(*list);
    request.context = static_cast<std::uint32_t>(a.integer("--ctx", 512, 4, 1 << 20));
    request.perplexityTokens = a.integer("--tokens", 2048, 0, 1LL << 30);
    request.requireText = true;
    if (a.valueOr("--text", "default") != "default") request.text = *a.value("--text");
    request.agreementTokens = static_cast<std::int32_t>(a.integer("--agreement", 144, 0, 1 << 20));
    const std::string battery = a.valueOr("--battery", "");
    if (battery == "none")
        request.batteryQuestions = 0;
    else if (!battery.empty())
        request.battery = battery;
    request.requireBattery = true;

    // The model and tokenizer; each scheme gets a CPU reference of its own weights.
    compute::LabSession session;
    compute::LoadOptions load;
    load.buildBackend = false;
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    const bool json = a.flag("--json");
    compute::JobControl control;
    control.progress = [&](const std::string& line, int) {
        if (!json) std::cerr << line << std::endl;
    };
    printTables(out, compute::experiments::QualityReportLab::run(session, request, control), json);
    return 0;
}

} // namespace

static int runReport(const CommandArgs& args, std::ostream& out) {
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

extern const CliCommand reportCommand{
    "report",
    "  report weights MODEL [--scheme S,...] [--matrix NAME]\n"
    "                                   quantization error of every projection matrix per "
    "scheme\n"
    "  report activations MODEL -p PROMPT [--chat] [--layer L] [--top K]\n"
    "                                   residual-stream outliers and INT8/INT4 levels used\n"
    "  report quality MODEL [--scheme S,...] [--text FILE] [--tokens N] [--battery "
    "FILE|none]\n"
    "                                   perplexity, factual battery and agreement per "
    "scheme\n",
    runReport};

} // namespace inferscope::cli
