#pragma once
// Whether one scheme's perplexity is lower than another's beyond the noise of the text it was
// measured on. Both runs score the same tokens, so the test is paired: the per-token
// differences of negative log-likelihood, their mean and its standard error. Two schemes
// within 1.96 standard errors (95%) are a tie, and a caption calls neither one better.
#include "compute/Table.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

struct PairedNllDifference {
    double meanNats = 0;    // mean of b - a over the tokens (> 0: b is worse)
    double halfWidth95 = 0; // 1.96 standard errors of that mean
    std::size_t tokens = 0;
    bool tied() const { return meanNats <= halfWidth95 && -meanNats <= halfWidth95; }
};

// Throws std::invalid_argument when the two runs scored different numbers of tokens or none.
PairedNllDifference pairedNllDifference(std::span<const double> a, std::span<const double> b);

struct SchemePerplexity {
    std::string scheme;
    double perplexity = 0;
    std::vector<double> tokenNll; // models::PerplexityResult::tokenNll
};

struct PerplexityRanking {
    std::size_t lowest = 0, highest = 0;
    // Per scheme, against the lowest: the perplexity ratio minus one (exp of the mean paired
    // difference) and its 95% half-width, both in percent; whether it ties with the lowest,
    // and whether it ties with the highest.
    std::vector<double> aboveLowestPercent, halfWidthPercent;
    std::vector<bool> tiedWithLowest, tiedWithHighest;
    std::string conclusion; // one sentence or two, for the table's notes and the caption
};

// At least one scheme; all scored the same tokens.
PerplexityRanking rankPerplexities(const std::vector<SchemePerplexity>& schemes);

// "quality-ranking": this run's schemes against its lowest perplexity, with the noise and a
// verdict per scheme; the conclusion is its first note. Not merged across runs (a paired test
// needs both runs' tokens), unlike the quality table.
Table perplexityRankingTable(const std::vector<SchemePerplexity>& schemes);

} // namespace inferscope::compute::experiments
