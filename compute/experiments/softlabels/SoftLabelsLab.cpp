#include "compute/experiments/softlabels/SoftLabelsLab.hpp"

#include "compute/experiments/quantization/SchemeBackends.hpp"
#include "models/tokenizer/PrintableBytes.hpp"

namespace inferscope::compute::experiments {

std::vector<models::QuantSchemeSpec> defaultSoftLabelSchemes() {
    std::vector<models::QuantSchemeSpec> schemes;
    for (const char* name : {"int8-row", "int4-g128", "nf4-b64", "int4-tensor"})
        schemes.push_back(models::parseQuantScheme(name));
    return schemes;
}

SoftLabelsLab::Result SoftLabelsLab::run(LabContext& lab, const Request& request,
                                         const JobControl& control) {
    PromptSpec prompt;
    prompt.prompt = request.prompt;
    prompt.chat = request.chat;
    prompt.maxNewTokens = 1;
    const auto ids = lab.promptIds(prompt);
    const auto& tokenizer = lab.tokenizer();
    std::size_t step = 0;
    const std::size_t steps = request.schemes.size() + 1;
    const auto backends = sessionSchemeBackends(lab);
    auto result = measureNextTokenDistribution(
        ids, request.prompt, request.schemes, *backends,
        // A token can hold part of a UTF-8 character: shown escaped, never as broken text.
        [&](std::int32_t id) {
            return models::printableBytes(
                tokenizer.decode(std::span<const std::int32_t>(&id, 1), true));
        },
        [&](const std::string& line) {
            control.throwIfCancelled();
            control.report(line, int(100 * step++ / steps));
        });
    control.report("Giving the session its weights back…", 99);
    backends->finish();
    control.report("Done", 100);
    return std::make_shared<const NextTokenDistribution>(std::move(result));
}

std::vector<Table> SoftLabelsLab::tables(const Result& result) {
    if (!result) return {};
    const std::vector<double> temperatures{1.0, 2.0};
    std::vector<Table> tables{softLabelTable(*result, temperatures, 5),
                              softLabelSummaryTable(*result, temperatures)};
    if (!result->schemes.empty()) tables.push_back(schemeDivergenceTable(*result));
    return tables;
}

} // namespace inferscope::compute::experiments
