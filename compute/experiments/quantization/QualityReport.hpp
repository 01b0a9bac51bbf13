#pragma once
// Chapter item 11: what each weight quantization scheme costs in quality. The model's
// projection matrices are replaced by their quantized-then-dequantized versions (the weights
// a GPU kernel of that scheme would compute with), then three measurements per scheme:
// perplexity on a fixed text, a 16-question factual battery under greedy decoding (with and
// without a repetition penalty), and token agreement with the full-precision model given
// identical context (teacher forcing on the full-precision model's own greedy tokens).
#include "compute/Table.hpp"
#include "compute/experiments/quantization/SchemeBackends.hpp"
#include "models/WeightStore.hpp"
#include "models/quant/WeightQuantizer.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct FactualQuestion {
    std::string id;
    std::string question;
    std::vector<std::string> accepted; // lowercase
};

struct FactualBattery {
    std::vector<FactualQuestion> questions;
    std::int32_t maxNewTokens = 48;
};

// resources/factual-battery.json (format in resources/README.md). Throws std::invalid_argument
// naming the problem (missing field, empty or non-lowercase accepted answer, ...).
FactualBattery parseFactualBattery(std::string_view json,
                                   const std::string& source = "factual battery");
FactualBattery loadFactualBattery(const std::filesystem::path& file);

// The scoring rule of resources/README.md: the lowercased answer contains an accepted string
// whose neighbours (if any) are not ASCII letters or digits.
bool answerAccepted(std::string_view answer, std::span<const std::string> accepted);

// Every weight dequantized to f32, with the projection matrices (q k v o gate up down) passed
// through `scheme` (packed, then dequantized). as-stored gives the weights as stored.
models::ReferenceWeights quantizedReferenceWeights(const models::WeightStore& weights,
                                                   const models::QuantSchemeSpec& scheme);

struct BatteryPrompt {
    std::vector<std::int32_t> ids; // the question in the chat template, tokenized
    std::vector<std::string> accepted;
};

struct QualityInputs {
    std::vector<models::QuantSchemeSpec> schemes; // empty: the standard list
    // Perplexity (skipped when the token list is empty).
    std::vector<std::int32_t> perplexityTokens;
    std::uint32_t context = 512;
    std::optional<std::int32_t> bosId;
    // Battery and agreement (skipped when there are no prompts).
    std::vector<BatteryPrompt> battery;
    std::int32_t maxNewTokens = 48;
    std::vector<std::int32_t> stopTokens;
    std::vector<float> repeatPenalties = {1.1f, 1.0f}; // one battery column each
    std::function<std::string(std::span<const std::int32_t>)> decode;
    // Agreement: the full-precision model generates this many tokens in all, split evenly over
    // the battery prompts (greedy, no penalty); each scheme predicts each of them.
    std::int32_t agreementTokens = 144;
    std::function<void(const std::string&)> progress; // one line per finished step
    // Before each scheme's measurements (index 0 .. total - 1), for per-scheme progress.
    std::function<void(std::size_t index, std::size_t total, const std::string& scheme)>
        schemeStarted;
};

// One rule for the perplexity text, shared by the window and the CLI: at least
// kMinimumPerplexityTokens tokens (a window of 64 scores 31 of them; fewer says little), and
// the window is the requested context, shortened to the text when the text is shorter.
// Throws std::invalid_argument naming both numbers when the text is too short.
inline constexpr std::size_t kMinimumPerplexityTokens = 64;
std::uint32_t perplexityContext(std::size_t textTokens, std::uint32_t requestedContext);

// Time left for `remaining` schemes at the mean of the measured seconds of those done so far
// (nullopt before the first one finished).
std::optional<double> estimatedSecondsLeft(std::span<const double> secondsPerDoneScheme,
                                           std::size_t remaining);

// Table "quality": scheme, bits/weight, perplexity, battery score per repetition penalty,
// agreement. The full-precision reference is the weights as stored.
std::vector<Table> qualityReport(const models::WeightStore& weights, const QualityInputs& inputs,
                                 SchemeBackends& backends);

} // namespace inferscope::compute::experiments
