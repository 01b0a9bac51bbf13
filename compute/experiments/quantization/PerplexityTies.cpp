#include "compute/experiments/quantization/PerplexityTies.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inferscope::compute::experiments {

PairedNllDifference pairedNllDifference(std::span<const double> a, std::span<const double> b) {
    if (a.size() != b.size() || a.empty())
        throw std::invalid_argument("paired perplexity: runs of " + std::to_string(a.size()) +
                                    " and " + std::to_string(b.size()) + " scored tokens");
    PairedNllDifference d;
    d.tokens = a.size();
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += b[i] - a[i];
    d.meanNats = sum / double(a.size());
    if (a.size() < 2) return d; // no spread to measure: any difference counts
    double squares = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double deviation = (b[i] - a[i]) - d.meanNats;
        squares += deviation * deviation;
    }
    const double standardError = std::sqrt(squares / double(a.size() - 1) / double(a.size()));
    d.halfWidth95 = 1.96 * standardError;
    return d;
}

namespace {
std::string joinNames(const std::vector<SchemePerplexity>& schemes,
                      const std::vector<std::size_t>& which) {
    std::string text;
    for (std::size_t i = 0; i < which.size(); ++i) {
        if (i) text += i + 1 == which.size() ? " and " : ", ";
        text += schemes[which[i]].scheme + " (" + fixed(schemes[which[i]].perplexity, 2) + ")";
    }
    return text;
}
} // namespace

PerplexityRanking rankPerplexities(const std::vector<SchemePerplexity>& schemes) {
    if (schemes.empty()) throw std::invalid_argument("no scheme to rank");
    PerplexityRanking r;
    const auto byPerplexity = [](const SchemePerplexity& a, const SchemePerplexity& b) {
        return a.perplexity < b.perplexity;
    };
    r.lowest = std::size_t(std::min_element(schemes.begin(), schemes.end(), byPerplexity) -
                           schemes.begin());
    r.highest = std::size_t(std::max_element(schemes.begin(), schemes.end(), byPerplexity) -
                            schemes.begin());
    std::vector<std::size_t> tiedLow, tiedHigh;
    for (std::size_t i = 0; i < schemes.size(); ++i) {
        const auto low = pairedNllDifference(schemes[r.lowest].tokenNll, schemes[i].tokenNll);
        const auto high = pairedNllDifference(schemes[i].tokenNll, schemes[r.highest].tokenNll);
        r.aboveLowestPercent.push_back(std::expm1(low.meanNats) * 100.0);
        r.halfWidthPercent.push_back(
            (std::exp(low.meanNats + low.halfWidth95) - std::exp(low.meanNats)) * 100.0);
        r.tiedWithLowest.push_back(low.tied());
        r.tiedWithHighest.push_back(high.tied());
        if (i != r.lowest && low.tied()) tiedLow.push_back(i);
        if (i != r.highest && high.tied()) tiedHigh.push_back(i);
    }
    const std::size_t tokens = schemes[r.lowest].tokenNll.size();
    const std::string paired =
        " (paired over the same " + groupThousands(std::int64_t(tokens)) + " tokens, 95%)";
    if (schemes.size() == 1) {
        r.conclusion = "One scheme measured: " + joinNames(schemes, {r.lowest}) + ".";
        return r;
    }
    if (tiedLow.size() + 1 == schemes.size()) {
        r.conclusion = "No scheme differs from another beyond the noise" + paired +
                       ": the lowest, " + joinNames(schemes, {r.lowest}) + ", ties with " +
                       joinNames(schemes, tiedLow) + ".";
        return r;
    }
    r.conclusion = "Lowest perplexity " + joinNames(schemes, {r.lowest});
    r.conclusion += tiedLow.empty() ? ", below every other scheme beyond the noise" + paired + "."
                                    : ", tied within the noise" + paired + " with " +
                                          joinNames(schemes, tiedLow) + ".";
    r.conclusion += " Highest " + joinNames(schemes, {r.highest});
    r.conclusion += tiedHigh.empty() ? "." : ", tied with " + joinNames(schemes, tiedHigh) + ".";
    return r;
}

Table perplexityRankingTable(const std::vector<SchemePerplexity>& schemes) {
    const auto ranking = rankPerplexities(schemes);
    Table table;
    table.id = "quality-ranking";
    table.title = "Perplexity ranking of this run (paired over the same tokens)";
    table.addColumn("scheme")
        .addColumn("perplexity", "", 2)
        .addColumn("above lowest", "%", 2)
        .addColumn("noise", "%", 2)
        .addColumn("verdict");
    for (std::size_t i = 0; i < schemes.size(); ++i) {
        std::string verdict = i == ranking.lowest          ? "lowest"
                              : ranking.tiedWithLowest[i]  ? "ties with the lowest"
                              : i == ranking.highest       ? "highest"
                              : ranking.tiedWithHighest[i] ? "ties with the highest"
                                                           : "above the lowest";
        table.addRow({schemes[i].scheme, schemes[i].perplexity, ranking.aboveLowestPercent[i],
                      ranking.halfWidthPercent[i], verdict});
    }
    table.notes.push_back(ranking.conclusion);
    table.notes.emplace_back(
        "above lowest: the scheme's perplexity over the lowest's, from the "
        "mean per-token difference of log-likelihood on the same text; noise: the 95% interval, "
        "1.96 standard errors of that mean. A difference inside the noise is "
        "a property of this text, not a ranking of the schemes.");
    return table;
}

} // namespace inferscope::compute::experiments
