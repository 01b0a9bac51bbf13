#include "compute/experiments/quantization/QuantizationLabs.hpp"

#include "compute/ResourcePaths.hpp"
#include "compute/Stopwatch.hpp"
#include "compute/engine/BackendPerplexity.hpp"
#include "models/formats/TextFile.hpp"
#include "models/reference/Perplexity.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

namespace inferscope::compute::experiments {

namespace {
std::string describeSeconds(double seconds) {
    char text[48];
    if (seconds < 90)
        std::snprintf(text, sizeof text, "%.0f s", std::ceil(seconds));
    else
        std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
    return text;
}
} // namespace

WeightReportLab::Result WeightReportLab::run(LabContext& lab, const Request& request,
                                             const JobControl& control) {
    if (request.schemes.empty()) throw std::invalid_argument("no scheme is ticked");
    control.report("Packing every projection matrix with " +
                       std::to_string(request.schemes.size()) + " schemes…",
                   5);
    auto tables = weightErrorReport(lab.model(), request);
    control.throwIfCancelled();
    control.report("Done", 100);
    return tables;
}

QualityReportLab::Result QualityReportLab::run(LabContext& lab, const Request& request,
                                               const JobControl& control) {
    const auto& tokenizer = lab.tokenizer();
    const auto& model = lab.model();
    const auto& chatFormat = lab.chatFormat();
    QualityInputs inputs;
    inputs.schemes = request.schemes.empty() ? models::standardQuantSchemes() : request.schemes;

    if (request.perplexityTokens > 0) {
        const auto file = request.text ? *request.text : models::defaultCorpusPath();
        std::error_code error;
        if (request.text || request.requireText || std::filesystem::exists(file, error)) {
            inputs.perplexityTokens = tokenizer.encode(models::readTextFile(file), true, false);
            if (inputs.perplexityTokens.size() > std::size_t(request.perplexityTokens))
                inputs.perplexityTokens.resize(std::size_t(request.perplexityTokens));
            inputs.context = perplexityContext(inputs.perplexityTokens.size(), request.context);
            if (model.tokenizer.addBos) inputs.bosId = tokenizer.bos();
        } else {
            control.report("No corpus installed: perplexity skipped", -1);
        }
    }
    if (request.batteryQuestions != 0) {
        // The battery given, else the one shipped inside the program (ResourcePaths).
        std::optional<FactualBattery> loaded;
        if (request.battery) {
            loaded = loadFactualBattery(*request.battery);
        } else if (const auto shipped = shippedResource("factual-battery.json")) {
            loaded = parseFactualBattery(shipped->bytes, shipped->source);
        }
        if (!loaded && request.requireBattery)
            throw std::invalid_argument("no factual battery is built in: pass a battery file");
        if (loaded && !chatFormat && request.requireBattery)
            throw std::invalid_argument("the battery needs a chat template, and this model has "
                                        "none we recognise");
        if (loaded && chatFormat) {
            auto battery = std::move(*loaded);
            if (request.batteryQuestions > 0 &&
                battery.questions.size() > std::size_t(request.batteryQuestions))
                battery.questions.resize(std::size_t(request.batteryQuestions));
            for (const auto& question : battery.questions)
                inputs.battery.push_back(
                    {tokenizer.encode(
                         models::formatChat(*chatFormat, {{"user", question.question}}, true), true,
                         true),
                     question.accepted});
            inputs.maxNewTokens = battery.maxNewTokens;
            inputs.agreementTokens = request.agreementTokens >= 0
                                         ? request.agreementTokens
                                         : 12 * std::int32_t(inputs.battery.size());
        }
    }
    inputs.stopTokens = tokenizer.stopTokens();
    inputs.decode = [&](std::span<const std::int32_t> ids) { return tokenizer.decode(ids, true); };

    // Progress per scheme, with the time left estimated from the schemes done so far.
    std::vector<double> schemeSeconds;
    auto schemeStart = Clock::now();
    std::size_t current = 0, total = inputs.schemes.size();
    std::string currentName;
    auto percent = [&] {
        return int(std::min<std::size_t>(99, 100 * current / std::max<std::size_t>(1, total)));
    };
    auto timeLeft = [&] {
        auto left = estimatedSecondsLeft(schemeSeconds, total - current);
        return left ? ", about " + describeSeconds(*left) + " left" : std::string();
    };
    inputs.schemeStarted = [&](std::size_t index, std::size_t count, const std::string& name) {
        if (index > 0) schemeSeconds.push_back(secondsSince(schemeStart));
        schemeStart = Clock::now();
        current = index;
        total = count;
        currentName = name;
        control.report("Scheme " + std::to_string(index + 1) + " of " + std::to_string(count) +
                           ": " + name + timeLeft(),
                       percent());
        if (control.cancelled()) throw JobCancelled();
    };
    inputs.progress = [&](const std::string& line) {
        control.report(currentName.empty() ? line
                                           : line + " (scheme " + std::to_string(current + 1) +
                                                 " of " + std::to_string(total) + timeLeft() + ")",
                       percent());
        if (control.cancelled()) throw JobCancelled(); // unwinds out of the report
    };

    control.report("Measuring " + std::to_string(total) + " schemes…", 0);
    const auto backends = sessionSchemeBackends(lab);
    auto tables = qualityReport(model.weights, inputs, *backends);
    control.report("Giving the session its weights back…", 99);
    backends->finish();
    control.report("Done", 100);
    return tables;
}

ActivationReportLab::Result ActivationReportLab::run(LabContext& lab, const Request& request,
                                                     const JobControl& control) {
    PromptSpec prompt;
    prompt.prompt = request.prompt;
    prompt.chat = request.chat;
    prompt.maxNewTokens = 0;
    const auto ids = lab.promptIds(prompt);
    control.report("Recording the residual stream of " + std::to_string(ids.size()) +
                       " prompt tokens on the CPU reference",
                   10);
    const auto recording = lab.recordResidualStream(ids);
    Result result;
    result.promptTokens = ids.size();
    result.tables = activationReport(*recording, request.options);
    return result;
}

PerplexityLab::Result PerplexityLab::run(LabContext& lab, const Request& request,
                                         const JobControl& control) {
    // Capped: a folder, /dev/zero or a huge file gets one clear error (TextFile.hpp).
    const std::string text = models::readTextFile(request.text);
    const auto& model = lab.model();
    if (model.config.contextLength && request.context > model.config.contextLength)
        throw std::invalid_argument("a context of " + std::to_string(request.context) +
                                    " exceeds the model's context of " +
                                    std::to_string(model.config.contextLength));
    const auto& tokenizer = lab.tokenizer();
    const auto tokens = tokenizer.encode(text, true, false);
    // The window's rule too: at least 64 tokens, the window shortened to a shorter text.
    std::uint32_t context = 0;
    try {
        context = perplexityContext(tokens.size(), request.context);
    } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(request.text.string() + ": " + error.what());
    }
    models::PerplexityOptions options;
    options.context = context;
    if (model.tokenizer.addBos) options.bosId = tokenizer.bos();
    options.tokenLimit = request.tokenLimit;
    options.progress = [&](std::uint32_t chunk, std::uint32_t chunks, double running) {
        control.throwIfCancelled();
        char line[96];
        std::snprintf(line, sizeof line, "chunk %u/%u: running perplexity %g", chunk + 1, chunks,
                      running);
        control.report(line, int(100 * (chunk + 1) / std::max(1u, chunks)));
    };
    auto& backend = lab.backend();
    const auto start = Clock::now();
    const auto result = backendPerplexity(backend, tokens, options);
    const double seconds = secondsSince(start);

    Table t;
    t.id = "perplexity";
    t.title = "Perplexity of " + request.text.filename().string();
    t.addColumn("property").addColumn("value");
    t.columns[1].precision = 4;
    t.addRow({std::string("perplexity"), result.perplexity});
    t.addRow({std::string("mean NLL (nats/token)"), result.meanNll});
    t.addRow({std::string("text tokens"), static_cast<std::int64_t>(tokens.size())});
    t.addRow({std::string("context"), static_cast<std::int64_t>(context)});
    t.addRow({std::string("chunks"), static_cast<std::int64_t>(result.chunks)});
    t.addRow({std::string("scored tokens"), static_cast<std::int64_t>(result.scoredTokens)});
    t.addRow({std::string("backend"), backend.name()});
    t.addRow({std::string("seconds"), seconds});
    t.notes.push_back("Rule: non-overlapping chunks of the context size; the second half of each "
                      "chunk is scored (as llama.cpp's llama-perplexity does).");
    return {t};
}

} // namespace inferscope::compute::experiments
