#include "compute/experiments/softlabels/SoftLabels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {

std::string temperatureName(double t) {
    char text[32];
    std::snprintf(text, sizeof text, "T = %g", t);
    return text;
}

} // namespace

std::vector<double> softmaxAtTemperature(std::span<const float> logits, double temperature) {
    if (!(temperature > 0) || !std::isfinite(temperature))
        throw std::invalid_argument("temperature must be above 0, got " +
                                    std::to_string(temperature));
    if (logits.empty()) throw std::invalid_argument("softmax of no logits");
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i)
        sum += (p[i] = std::exp((double(logits[i]) - top) / temperature));
    for (auto& x : p) x /= sum;
    return p;
}

double entropyNats(std::span<const double> p) {
    double h = 0;
    for (double x : p)
        if (x > 0) h -= x * std::log(x);
    return h;
}

double klDivergenceNats(std::span<const double> p, std::span<const double> q) {
    if (p.size() != q.size()) throw std::invalid_argument("KL of distributions of two sizes");
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] <= 0) continue;
        if (q[i] <= 0) return std::numeric_limits<double>::infinity();
        kl += p[i] * std::log(p[i] / q[i]);
    }
    return std::max(0.0, kl); // rounding can leave -1e-17 for equal distributions
}

std::vector<std::int32_t> topTokens(std::span<const float> logits, std::size_t count) {
    std::vector<std::int32_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    count = std::min(count, ids.size());
    std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(count), ids.end(),
                      [&](std::int32_t a, std::int32_t b) {
                          return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
                      });
    ids.resize(count);
    return ids;
}

NextTokenDistribution measureNextTokenDistribution(
    const std::vector<std::int32_t>& promptIds, const std::string& prompt,
    const std::vector<models::QuantSchemeSpec>& schemes, SchemeBackends& backends,
    const std::function<std::string(std::int32_t)>& decode,
    const std::function<void(const std::string&)>& progress, std::size_t keepTop) {
    if (promptIds.empty()) throw std::invalid_argument("soft labels: the prompt has no tokens");
    auto say = [&](const std::string& line) {
        if (progress) progress(line);
    };
    NextTokenDistribution d;
    d.prompt = prompt;
    say("Reference (weights as stored)…");
    {
        auto& backend = backends.use({models::QuantScheme::AsStored, 0});
        d.logits = backend.append(promptIds);
        d.reference = "weights as stored, on " + backend.name();
    }
    d.topIds = topTokens(d.logits, keepTop);
    for (auto id : d.topIds) d.topPieces.push_back(decode(id));
    const auto reference = softmaxAtTemperature(d.logits, 1.0);
    for (const auto& scheme : schemes) {
        say("Scheme " + scheme.name() + "…");
        const auto logits = backends.use(scheme).append(promptIds);
        const auto q = softmaxAtTemperature(logits, 1.0);
        SchemeDivergence s;
        s.scheme = scheme.name();
        s.klNats = klDivergenceNats(reference, q);
        s.topToken = topTokens(logits, 1).front();
        s.topPiece = decode(s.topToken);
        s.topProbability = q[std::size_t(s.topToken)];
        d.schemes.push_back(std::move(s));
    }
    d.schemesRanOn = backends.description();
    return d;
}

Table softLabelTable(const NextTokenDistribution& d, const std::vector<double>& temperatures,
                     std::size_t topK) {
    if (temperatures.empty()) throw std::invalid_argument("soft labels: no temperature");
    Table t;
    t.id = "soft-labels";
    t.title = "Next token after \"" + d.prompt + "\": the soft label at each temperature";
    t.addColumn("rank").addColumn("token id").addColumn("token");
    std::vector<std::vector<double>> p;
    for (double temperature : temperatures) {
        t.addColumn(temperatureName(temperature), "p", 4);
        p.push_back(softmaxAtTemperature(d.logits, temperature));
    }
    const std::size_t rows = std::min(topK, d.topIds.size());
    for (std::size_t r = 0; r < rows; ++r) {
        // Built cell by cell: GCC 12 warns (falsely) on an initializer list of string cells.
        std::vector<Cell> row;
        row.reserve(3 + p.size());
        row.emplace_back(std::int64_t(r + 1));
        row.emplace_back(std::int64_t(d.topIds[r]));
        row.emplace_back(std::in_place_type<std::string>, d.topPieces[r]);
        for (const auto& probabilities : p) row.push_back(probabilities[std::size_t(d.topIds[r])]);
        t.addRow(std::move(row));
    }
    t.notes.push_back("softmax(logits / T) over all " +
                      groupThousands(std::int64_t(d.logits.size())) +
                      " tokens; the order never changes with T, only how flat it is.");
    return t;
}

Table softLabelSummaryTable(const NextTokenDistribution& d,
                            const std::vector<double>& temperatures) {
    Table t;
    t.id = "soft-label-summary";
    t.title = "How flat the soft label is at each temperature";
    t.addColumn("T", "", -1)
        .addColumn("entropy", "bits", 3)
        .addColumn("top-1", "p", 4)
        .addColumn("top-1 / top-3", "x", 4)
        .addColumn("ratio at T = 1, to the power 1/T", "x", 4);
    if (d.topIds.size() < 3) throw std::invalid_argument("soft labels: fewer than 3 tokens");
    const auto one = softmaxAtTemperature(d.logits, 1.0);
    const double ratioAtOne = one[std::size_t(d.topIds[0])] / one[std::size_t(d.topIds[2])];
    for (double temperature : temperatures) {
        const auto p = softmaxAtTemperature(d.logits, temperature);
        const double top1 = p[std::size_t(d.topIds[0])], top3 = p[std::size_t(d.topIds[2])];
        t.addRow({temperature, entropyNats(p) / std::log(2.0), top1, top1 / top3,
                  std::pow(ratioAtOne, 1.0 / temperature)});
    }
    t.notes.push_back("p1 / p3 = exp((l1 - l3) / T): dividing the logits by T takes the T-th root "
                      "of the ratio, so the last two columns agree (at T = 2, the square root).");
    return t;
}

Table schemeDivergenceTable(const NextTokenDistribution& d) {
    Table t;
    t.id = "scheme-divergence";
    t.title = "How far each scheme moves the next-token distribution (KL from the reference)";
    t.addColumn("scheme")
        .addColumn("KL(reference || scheme)", "nats", 5)
        .addColumn("top token")
        .addColumn("its p", "p", 4)
        .addColumn("same top-1");
    const std::int32_t referenceTop = d.topIds.empty() ? -1 : d.topIds.front();
    for (const auto& s : d.schemes)
        t.addRow({s.scheme, s.klNats, s.topPiece, s.topProbability,
                  std::string(s.topToken == referenceTop ? "yes" : "no")});
    t.notes.push_back("Reference: " + d.reference + ". The schemes ran on " + d.schemesRanOn + ".");
    return t;
}

} // namespace inferscope::compute::experiments
