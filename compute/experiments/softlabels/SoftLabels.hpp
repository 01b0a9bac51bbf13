#pragma once
// Chapter item 13, soft labels: the model's whole next-token distribution, not just its
// argmax, at temperature T (softmax of logits / T). Dividing the logits by T takes the T-th
// root of every probability ratio: at T = 2 the top-1 / top-3 ratio is the square root of the
// T = 1 ratio. Beyond the chapter: how far each quantization scheme's distribution moves from
// the reference's (KL divergence), at the same prompt.
#include "compute/Table.hpp"
#include "compute/experiments/quantization/QualityReport.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

// softmax(logits / T) in double precision; throws std::invalid_argument for T <= 0 or
// non-finite T.
std::vector<double> softmaxAtTemperature(std::span<const float> logits, double temperature);
double entropyNats(std::span<const double> probabilities);
// KL(p || q) in nats; q == 0 where p > 0 gives infinity.
double klDivergenceNats(std::span<const double> p, std::span<const double> q);
// Token ids by descending logit (ties: lower id first), the first `count`.
std::vector<std::int32_t> topTokens(std::span<const float> logits, std::size_t count);

struct SchemeDivergence {
    std::string scheme;
    double klNats = 0;          // KL(reference || scheme) at T = 1
    std::int32_t topToken = -1; // the scheme's argmax
    std::string topPiece;       // its text
    double topProbability = 0;  // under the scheme
};

// One prompt's next-token distribution, kept whole so any temperature can be redrawn.
struct NextTokenDistribution {
    std::string prompt;
    std::string reference;    // what produced the logits ("weights as stored, on ...")
    std::string schemesRanOn; // SchemeBackends::description()
    std::vector<float> logits;
    std::vector<std::int32_t> topIds;   // the most likely tokens, by logit
    std::vector<std::string> topPieces; // their text
    std::vector<SchemeDivergence> schemes;
};
using NextTokenDistributionPtr = std::shared_ptr<const NextTokenDistribution>;

// The reference from the weights as stored, then each scheme (on `backends`, one at a time);
// `decode` gives a token's text.
NextTokenDistribution measureNextTokenDistribution(
    const std::vector<std::int32_t>& promptIds, const std::string& prompt,
    const std::vector<models::QuantSchemeSpec>& schemes, SchemeBackends& backends,
    const std::function<std::string(std::int32_t)>& decode,
    const std::function<void(const std::string&)>& progress = {}, std::size_t keepTop = 32);

// Rank, token and its probability at each temperature (the CLI's and the panel's table).
Table softLabelTable(const NextTokenDistribution& d, const std::vector<double>& temperatures,
                     std::size_t topK);
// Per temperature: entropy, top-1 probability, top-1 / top-3 ratio, and that ratio predicted
// from T = 1 as ratio(1)^(1/T).
Table softLabelSummaryTable(const NextTokenDistribution& d,
                            const std::vector<double>& temperatures);
// Per scheme: KL from the reference, its top token and whether it is the reference's.
Table schemeDivergenceTable(const NextTokenDistribution& d);

} // namespace inferscope::compute::experiments
