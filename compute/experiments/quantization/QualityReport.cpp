#include "compute/experiments/quantization/QualityReport.hpp"

#include "models/ModelError.hpp"
#include "models/formats/StrictJson.hpp"

#include "compute/engine/BackendPerplexity.hpp"
#include "compute/engine/Generation.hpp"
#include "compute/experiments/quantization/PerplexityTies.hpp"
#include "compute/experiments/quantization/WeightReport.hpp"
#include "models/formats/TextFile.hpp"
#include "models/reference/Perplexity.hpp"
#include "models/reference/Sampler.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

bool isWordCharacter(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

std::string lowercase(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = char(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

std::string penaltyName(float penalty) {
    char buffer[48];
    if (penalty == 1.0f)
        std::snprintf(buffer, sizeof buffer, "battery, no penalty");
    else
        std::snprintf(buffer, sizeof buffer, "battery, penalty %.2g", double(penalty));
    return buffer;
}

} // namespace

FactualBattery parseFactualBattery(std::string_view text, const std::string& source) {
    nlohmann::json doc;
    try {
        // Strict: duplicate keys and nesting past 64 levels are refused, with the line.
        doc = models::parseStrictJson(text, source);
    } catch (const models::ModelError& e) {
        throw std::invalid_argument(std::string("factual battery: ") + e.what());
    }
    auto fail = [](const std::string& what) {
        throw std::invalid_argument("factual battery: " + what);
    };
    if (!doc.is_object() || !doc.contains("questions") || !doc["questions"].is_array())
        fail("expected an object with a \"questions\" array");
    FactualBattery battery;
    if (doc.contains("max_new_tokens")) {
        if (!doc["max_new_tokens"].is_number_integer() || doc["max_new_tokens"].get<int>() < 1 ||
            doc["max_new_tokens"].get<int>() > 4096)
            fail("\"max_new_tokens\" must be an integer in 1..4096");
        battery.maxNewTokens = doc["max_new_tokens"].get<std::int32_t>();
    }
    for (std::size_t i = 0; i < doc["questions"].size(); ++i) {
        const auto& q = doc["questions"][i];
        const std::string where = "question " + std::to_string(i);
        if (!q.is_object() || !q.contains("question") || !q["question"].is_string() ||
            q["question"].get<std::string>().empty())
            fail(where + ": needs a non-empty \"question\" string");
        if (!q.contains("accepted") || !q["accepted"].is_array() || q["accepted"].empty())
            fail(where + ": needs a non-empty \"accepted\" list");
        FactualQuestion question;
        question.id = q.contains("id") && q["id"].is_string() ? q["id"].get<std::string>()
                                                              : std::to_string(i);
        question.question = q["question"].get<std::string>();
        for (const auto& a : q["accepted"]) {
            if (!a.is_string() || a.get<std::string>().empty())
                fail(where + ": accepted answers must be non-empty strings");
            const auto answer = a.get<std::string>();
            if (answer != lowercase(answer))
                fail(where + ": accepted answer '" + answer + "' is not lowercase");
            question.accepted.push_back(answer);
        }
        battery.questions.push_back(std::move(question));
    }
    if (battery.questions.empty()) fail("no questions");
    return battery;
}

FactualBattery loadFactualBattery(const std::filesystem::path& file) {
    std::string content;
    try {
        // A battery is a few KB: a folder, a device or a huge file is refused clearly.
        content = models::readTextFile(file, models::kMaxSmallTextBytes);
    } catch (const models::TextFileError& e) {
        throw std::invalid_argument(std::string("factual battery ") + e.what());
    }
    return parseFactualBattery(content, file.string());
}

bool answerAccepted(std::string_view answer, std::span<const std::string> accepted) {
    const std::string text = lowercase(answer);
    for (const std::string& candidate : accepted) {
        if (candidate.empty()) continue;
        for (std::size_t at = text.find(candidate); at != std::string::npos;
             at = text.find(candidate, at + 1)) {
            const bool startOk = at == 0 || !isWordCharacter(text[at - 1]);
            const std::size_t end = at + candidate.size();
            const bool endOk = end == text.size() || !isWordCharacter(text[end]);
            if (startOk && endOk) return true;
        }
    }
    return false;
}

models::ReferenceWeights quantizedReferenceWeights(const models::WeightStore& weights,
                                                   const models::QuantSchemeSpec& scheme) {
    models::ReferenceWeights result = models::dequantizeAll(weights);
    if (scheme.scheme == models::QuantScheme::AsStored) return result;
    for (const std::string& name : projectionMatrixNames(weights)) {
        const models::StoredTensor& tensor = weights.at(name);
        std::vector<float>& w = result.at(name);
        const auto packed = models::packMatrix(scheme, w, tensor.rows(), tensor.cols());
        models::dequantizeMatrix(packed, w);
    }
    return result;
}

std::uint32_t perplexityContext(std::size_t textTokens, std::uint32_t requestedContext) {
    if (textTokens < kMinimumPerplexityTokens)
        throw std::invalid_argument("perplexity needs at least " +
                                    std::to_string(kMinimumPerplexityTokens) +
                                    " tokens of text, got " + std::to_string(textTokens));
    if (requestedContext < kMinimumPerplexityTokens)
        throw std::invalid_argument("a perplexity window of " + std::to_string(requestedContext) +
                                    " tokens is too short: at least " +
                                    std::to_string(kMinimumPerplexityTokens));
    return std::uint32_t(std::min<std::size_t>(requestedContext, textTokens));
}

std::optional<double> estimatedSecondsLeft(std::span<const double> secondsPerDoneScheme,
                                           std::size_t remaining) {
    if (secondsPerDoneScheme.empty()) return std::nullopt;
    double total = 0;
    for (double s : secondsPerDoneScheme) total += s;
    return total / double(secondsPerDoneScheme.size()) * double(remaining);
}

std::vector<Table> qualityReport(const models::WeightStore& weights, const QualityInputs& inputs,
                                 SchemeBackends& backends) {
    const auto schemes = inputs.schemes.empty() ? models::standardQuantSchemes() : inputs.schemes;
    const auto names = projectionMatrixNames(weights);
    std::uint64_t parameters = 0;
    for (const auto& name : names) parameters += weights.at(name).elements();
    auto progress = [&](const std::string& line) {
        if (inputs.progress) inputs.progress(line);
    };

    // The full-precision model's greedy tokens for the agreement column.
    struct Continuation {
        std::vector<std::int32_t> prompt;
        std::vector<std::int32_t> tokens;
    };
    std::vector<Continuation> reference;
    const bool runBattery = !inputs.battery.empty();
    if (runBattery && inputs.agreementTokens > 0) {
        auto* backend = &backends.use({models::QuantScheme::AsStored, 0});
        const std::size_t prompts = inputs.battery.size();
        for (std::size_t i = 0; i < prompts; ++i) {
            // Split the total evenly; the first (total % prompts) prompts take one more.
            const std::int32_t count =
                inputs.agreementTokens / std::int32_t(prompts) +
                (std::int32_t(i) < inputs.agreementTokens % std::int32_t(prompts));
            if (count == 0) continue;
            GenerationOptions options;
            options.maxNewTokens = count;
            options.sampling.greedy = true; // no stop tokens: a fixed number per prompt
            auto result = generate(*backend, inputs.battery[i].ids, options);
            if (!result.generatedIds.empty())
                reference.push_back({inputs.battery[i].ids, result.generatedIds});
        }
        progress("agreement reference: full-precision greedy tokens generated");
    }

    Table table;
    table.id = "quality";
    table.title = "Quality per scheme (projection matrices quantized, " +
                  groupThousands(std::int64_t(parameters)) + " parameters)";
    table.addColumn("scheme").addColumn("bits/weight", "", 3);
    const bool measurePerplexity = !inputs.perplexityTokens.empty();
    if (measurePerplexity) table.addColumn("perplexity", "", 2);
    std::vector<SchemePerplexity> perplexities;
    if (runBattery)
        for (float penalty : inputs.repeatPenalties) table.addColumn(penaltyName(penalty), "", 0);
    if (!reference.empty())
        table.addColumn("agreement", "%", 1).addColumn("agreeing", "", 0).addColumn("of", "", 0);

    for (std::size_t index = 0; index < schemes.size(); ++index) {
        const auto& scheme = schemes[index];
        if (inputs.schemeStarted) inputs.schemeStarted(index, schemes.size(), scheme.name());
        std::uint64_t packedBytes = 0;
        for (const auto& name : names) {
            const auto& tensor = weights.at(name);
            packedBytes += scheme.scheme == models::QuantScheme::AsStored
                               ? tensor.data.size()
                               : models::packedByteCount(scheme, tensor.rows(), tensor.cols());
        }
        auto* backend = &backends.use(scheme);
        std::vector<Cell> row;
        row.emplace_back(scheme.name());
        row.emplace_back(8.0 * double(packedBytes) /
                         double(std::max<std::uint64_t>(parameters, 1)));

        if (!inputs.perplexityTokens.empty()) {
            models::PerplexityOptions options;
            options.context = inputs.context;
            options.bosId = inputs.bosId;
            const auto result = backendPerplexity(*backend, inputs.perplexityTokens, options);
            row.emplace_back(result.perplexity);
            perplexities.push_back({scheme.name(), result.perplexity, result.tokenNll});
            progress(scheme.name() + ": perplexity " + std::to_string(result.perplexity));
        }
        if (runBattery)
            for (float penalty : inputs.repeatPenalties) {
                std::int64_t correct = 0;
                for (const auto& question : inputs.battery) {
                    GenerationOptions options;
                    options.maxNewTokens = inputs.maxNewTokens;
                    options.sampling.greedy = true;
                    options.sampling.repeatPenalty = penalty;
                    options.stopTokens = inputs.stopTokens;
                    auto result = generate(*backend, question.ids, options);
                    if (result.stoppedByToken) result.generatedIds.pop_back();
                    const std::string answer =
                        inputs.decode ? inputs.decode(result.generatedIds) : std::string();
                    if (answerAccepted(answer, question.accepted)) ++correct;
                }
                row.emplace_back(correct);
                progress(scheme.name() + ": " + penaltyName(penalty) + " " +
                         std::to_string(correct) + "/" + std::to_string(inputs.battery.size()));
            }
        if (!reference.empty()) {
            std::int64_t agreeing = 0, total = 0;
            for (const auto& continuation : reference) {
                if (continuation.tokens.empty()) continue;
                // Teacher forcing: the prompt and all but the last reference token; the logits
                // at position prompt - 1 + j predict reference token j.
                std::vector<std::int32_t> sequence = continuation.prompt;
                sequence.insert(sequence.end(), continuation.tokens.begin(),
                                continuation.tokens.end() - 1);
                backend->reset();
                const auto logits = backend->appendAllLogits(sequence);
                const std::size_t vocab = backend->vocabSize();
                for (std::size_t j = 0; j < continuation.tokens.size(); ++j) {
                    const std::size_t position = continuation.prompt.size() - 1 + j;
                    const auto predicted = models::argmax(
                        std::span<const float>(logits).subspan(position * vocab, vocab));
                    agreeing += predicted == continuation.tokens[j];
                    ++total;
                }
            }
            row.emplace_back(100.0 * double(agreeing) / double(std::max<std::int64_t>(total, 1)));
            row.emplace_back(agreeing);
            row.emplace_back(total);
            progress(scheme.name() + ": agreement " + std::to_string(agreeing) + "/" +
                     std::to_string(total));
        }
        table.addRow(std::move(row));
    }
    if (measurePerplexity)
        table.notes.push_back(
            "perplexity over " + std::to_string(inputs.perplexityTokens.size()) +
            " tokens, windows of " + std::to_string(inputs.context) +
            " (llama-perplexity's rule: the second half of each window is scored)");
    if (runBattery)
        table.notes.push_back("battery: " + std::to_string(inputs.battery.size()) +
                              " questions, greedy, at most " + std::to_string(inputs.maxNewTokens) +
                              " tokens; correct = an accepted answer as a whole word");
    if (!reference.empty())
        table.notes.push_back("agreement: the scheme's greedy choice at each of the full-precision "
                              "model's own greedy tokens, given the same prefix");
    table.notes.push_back("ran on " + backends.description());
    if (!measurePerplexity) return {table};
    return {table, perplexityRankingTable(perplexities)};
}

} // namespace inferscope::compute::experiments
