#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/softlabels/SoftLabelsLab.hpp"
#include "compute/session/LabSession.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>

namespace inferscope::cli {

static int runSoftLabels(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{
        {"--prompt", "--top", "--temp", "--scheme"}, {"--json", "--chat"}, {{"-p", "--prompt"}}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    if (a.positionals().size() != 1)
        throw UsageError("usage: softlabels MODEL [-p PROMPT] [--top K] [--temp 1,2] "
                         "[--scheme S,...|none] [--chat] [--json]",
                         true);
    const auto topK = static_cast<std::size_t>(a.integer("--top", 5, 3, 32));
    const auto temperatures = parseNumberList(a.valueOr("--temp", "1,2"), "--temp", -1e9, 1e3);
    for (double t : temperatures)
        if (!(t > 0))
            throw UsageError("--temp: a temperature must be above 0, got " + std::to_string(t));
    compute::experiments::SoftLabelRequest request;
    request.prompt = a.valueOr("--prompt", request.prompt);
    request.chat = a.flag("--chat");
    const std::string schemes = a.valueOr("--scheme", "int8-row,int4-g128,nf4-b64,int4-tensor");
    if (schemes != "none") {
        try {
            for (const auto& name : parseNameList(schemes))
                request.schemes.push_back(models::parseQuantScheme(name));
        } catch (const std::exception& e) {
            throw UsageError(std::string("--scheme: ") + e.what());
        }
    }
    const BackendArguments backend = backendArguments(a);
    compute::LabSession session;
    compute::LoadOptions load;
    load.choice = backend.choice;
    load.warmUp = false; // nothing here is timed
    std::cerr << "softlabels: loading the model…\n";
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    compute::JobControl control;
    control.progress = [](const std::string& stage, int) {
        std::cerr << "softlabels: " << stage << "\n";
    };
    std::shared_ptr<const compute::experiments::NextTokenDistribution> d;
    try {
        d = compute::experiments::SoftLabelsLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // an empty prompt, or one without a chat template
    }
    namespace ex = compute::experiments;
    std::vector<compute::Table> tables{ex::softLabelTable(*d, temperatures, topK),
                                       ex::softLabelSummaryTable(*d, temperatures)};
    if (!d->schemes.empty()) tables.push_back(ex::schemeDivergenceTable(*d));
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand softlabelsCommand{
    "softlabels",
    "  softlabels MODEL [-p PROMPT] [--top K] [--temp 1,2] [--scheme S,...|none] [--chat]\n"
    "                                   the next token's probabilities at temperature T\n"
    "                                   and each scheme's KL divergence from them\n",
    runSoftLabels};

} // namespace inferscope::cli
