// `inferscope-cli speculative MODEL`: chapter item 12. The model as the target and as each
// draft scheme on one Vulkan device: alpha and the draft's cost c per scheme, the formula over
// g beside the measured runs, and real speculative runs (greedy: the target's own tokens).
#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/speculative/SpeculativeLab.hpp"
#include "compute/formats/WeightFormat.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>

namespace inferscope::cli {

static int runSpeculative(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--draft", "--draft-length", "--target", "--positions", "--tokens", "--temp",
                     "--seed", "--prompt", "--run-draft", "--device"},
                    {"--json", "--no-chat", "--quiet"},
                    {{"-g", "--draft-length"}, {"-p", "--prompt"}}};
    Arguments a(args, spec);
    if (a.positionals().size() != 1)
        throw UsageError("usage: speculative MODEL [--draft S,...] [-g 2,4,8] [--target fp16] "
                         "[--positions 144] [--tokens 64] [--temp T --seed S] [-p PROMPT] "
                         "[--no-chat] [--run-draft S] [--device N] [--json]",
                         true);
    compute::experiments::SpeculativeRequest request;
    auto& study = request.study;
    const auto checkFormat = [](const std::string& name, const char* option) {
        if (!compute::weightFormatFromName(name))
            throw UsageError(std::string(option) + ": '" + name + "' has no GPU kernel (one of " +
                             compute::weightFormatNames() + ")");
        return name;
    };
    if (auto drafts = a.value("--draft")) {
        study.draftFormats.clear();
        for (const auto& name : parseNameList(*drafts))
            study.draftFormats.push_back(checkFormat(name, "--draft"));
    }
    study.targetFormat = checkFormat(a.valueOr("--target", study.targetFormat), "--target");
    if (auto name = a.value("--run-draft")) study.runDraft = checkFormat(*name, "--run-draft");
    if (auto lengths = a.value("--draft-length"))
        study.runDraftLengths = parsePositiveList(*lengths, "-g");
    study.positions = std::uint32_t(a.integer("--positions", study.positions, 2, 1 << 16));
    study.runTokens = std::int32_t(a.integer("--tokens", study.runTokens, 1, 1 << 16));
    study.temperature = a.number("--temp", 0.0, 0.0, 100.0);
    study.seed = std::uint64_t(a.integer("--seed", 0, 0, (1ll << 62)));
    request.prompt = a.valueOr("--prompt", request.prompt);
    request.chat = !a.flag("--no-chat");
    compute::EngineOptions engine;
    engine.device.deviceIndex = deviceArgument(a);
    request.engine = engine;
    const bool quiet = a.flag("--quiet") || a.flag("--json");

    compute::LabSession session;
    compute::LoadOptions load;
    load.buildBackend = false; // the study builds its own two engines
    if (!quiet) std::cerr << "speculative: loading the model…\n";
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    compute::JobControl control;
    control.progress = [quiet](const std::string& stage, int) {
        if (!quiet) std::cerr << "speculative: " << stage << "\n";
    };
    compute::experiments::SpeculativeStudyPtr result;
    try {
        result = compute::experiments::SpeculativeLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // a g over the context, a prompt without a chat template
    }
    printTables(out, compute::experiments::speculativeTables(*result), a.flag("--json"));
    return 0;
}

extern const CliCommand speculativeCommand{
    "speculative",
    "  speculative MODEL [--draft S,...] [-g 2,4,8] [--target fp16|as-stored]\n"
    "              [--positions 144] [--tokens 64] [--temp T --seed S] [-p PROMPT]\n"
    "              [--no-chat] [--run-draft S] [--device N]\n"
    "                                   a quantized draft for the model: alpha and cost c\n"
    "                                   per scheme, the formula over g, real runs\n",
    runSpeculative};

} // namespace inferscope::cli
