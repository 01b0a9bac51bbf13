#include "compute/experiments/serving/RequestMix.hpp"

#include "models/ModelError.hpp"
#include "models/formats/StrictJson.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

namespace inferscope::compute::experiments {

namespace {
// splitmix64: the same numbers on every platform (std distributions are not specified).
struct MixRandom {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

} // namespace

std::vector<std::uint32_t> skewedLengths(const RequestMixSpec& spec) {
    const std::uint32_t n = spec.requests;
    if (n < 3)
        throw std::invalid_argument("a generated mix needs at least 3 requests (use a mix file "
                                    "for fewer)");
    if (spec.median < 1 || spec.longest < spec.median)
        throw std::invalid_argument("a mix needs 1 <= median <= longest (got median " +
                                    std::to_string(spec.median) + ", longest " +
                                    std::to_string(spec.longest) + ")");
    // Sorted positions: the middle one(s) hold the median, the last the longest, the rest are
    // free: below the middle in [1, median], above it in [median, longest].
    const std::uint32_t middles = n % 2 ? 1 : 2;
    const std::uint32_t low = (n - middles) / 2;
    const std::uint32_t high = n - middles - low - 1;
    const std::int64_t fixedSum = std::int64_t(spec.median) * middles + spec.longest;
    const std::int64_t minTotal = fixedSum + low + std::int64_t(high) * spec.median;
    const std::int64_t maxTotal =
        fixedSum + std::int64_t(low) * spec.median + std::int64_t(high) * spec.longest;
    if (spec.total < minTotal || spec.total > maxTotal)
        throw std::invalid_argument(std::to_string(n) + " requests with median " +
                                    std::to_string(spec.median) + " and longest " +
                                    std::to_string(spec.longest) + " add up to " +
                                    std::to_string(minTotal) + ".." + std::to_string(maxTotal) +
                                    " tokens, not " + std::to_string(spec.total));

    MixRandom random{spec.seed * 0x2545F4914F6CDD1Dull + 1};
    std::vector<std::int64_t> lows(low), highs(high);
    for (auto& v : lows) v = 1 + std::llround((spec.median - 1) * random.uniform());
    // Cubed: most of the upper half stays near the median, a few reach far (the long tail).
    for (auto& v : highs)
        v = spec.median +
            std::llround((spec.longest - spec.median) * std::pow(random.uniform(), 3));
    const std::int64_t lowSum = std::accumulate(lows.begin(), lows.end(), std::int64_t(0));
    const std::int64_t wantHighExcess =
        std::int64_t(spec.total) - fixedSum - lowSum - std::int64_t(high) * spec.median;
    std::int64_t excess = 0;
    for (auto v : highs) excess += v - spec.median;
    if (excess > 0 && wantHighExcess > 0) {
        const double scale = double(wantHighExcess) / double(excess);
        for (auto& v : highs)
            v = std::min<std::int64_t>(spec.longest,
                                       spec.median + std::llround((v - spec.median) * scale));
    }
    // Whatever rounding left over, one token at a time over every free length.
    std::int64_t diff = std::int64_t(spec.total) - fixedSum - lowSum;
    for (auto v : highs) diff -= v;
    while (diff != 0) {
        bool changed = false;
        auto nudge = [&](std::int64_t& v, std::int64_t lo, std::int64_t hi) {
            if (diff > 0 && v < hi) {
                ++v;
                --diff;
                changed = true;
            } else if (diff < 0 && v > lo) {
                --v;
                ++diff;
                changed = true;
            }
        };
        for (auto& v : highs)
            if (diff != 0) nudge(v, spec.median, spec.longest);
        for (auto& v : lows)
            if (diff != 0) nudge(v, 1, spec.median);
        if (!changed) throw std::logic_error("skewedLengths: no length can move");
    }
    std::vector<std::uint32_t> lengths;
    for (auto v : lows) lengths.push_back(std::uint32_t(v));
    for (std::uint32_t i = 0; i < middles; ++i) lengths.push_back(spec.median);
    for (auto v : highs) lengths.push_back(std::uint32_t(v));
    lengths.push_back(spec.longest);
    // Arrival order: a Fisher-Yates shuffle with the same numbers.
    for (std::size_t i = lengths.size() - 1; i > 0; --i)
        std::swap(lengths[i], lengths[std::size_t(random.next() % (i + 1))]);
    return lengths;
}

std::vector<MixEntry> loadRequestMix(const std::filesystem::path& file) {
    const std::string name = file.string();
    nlohmann::json doc;
    try {
        // A regular file of at most 1 MiB (RegularFile refuses a FIFO or a folder at once),
        // strict JSON: duplicate keys and nesting past 64 levels are refused.
        doc = models::readStrictJsonFile(file, kMaxMixFileBytes);
    } catch (const models::ModelError& e) {
        // A field means the text was read and did not parse; none, that the file could not be.
        throw std::invalid_argument(std::string("the mix file ") +
                                    (e.field().empty() ? "" : "does not parse as JSON: ") +
                                    e.what());
    }
    const nlohmann::json* list = &doc;
    if (doc.is_object() && doc.contains("requests")) list = &doc["requests"];
    if (!list->is_array())
        throw std::invalid_argument("the mix file " + name +
                                    " needs {\"requests\": [{\"prompt\": ..., \"tokens\": N}]}");
    if (list->size() > kMaxMixRequests)
        throw std::invalid_argument("the mix file " + name + " has " +
                                    std::to_string(list->size()) + " requests, over the limit of " +
                                    std::to_string(kMaxMixRequests));
    std::vector<MixEntry> entries;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const auto& item = (*list)[i];
        const std::string where = "the mix file " + name + ", request " + std::to_string(i + 1);
        if (!item.is_object() || !item.contains("prompt") || !item["prompt"].is_string() ||
            item["prompt"].get<std::string>().empty())
            throw std::invalid_argument(where + ": needs a non-empty \"prompt\" string");
        if (!item.contains("tokens") || !item["tokens"].is_number_integer() ||
            item["tokens"].get<std::int64_t>() < 1 || item["tokens"].get<std::int64_t>() > 1 << 20)
            throw std::invalid_argument(where + ": needs \"tokens\", a whole number >= 1");
        entries.push_back(
            {item["prompt"].get<std::string>(), std::uint32_t(item["tokens"].get<std::int64_t>())});
    }
    if (entries.empty()) throw std::invalid_argument("the mix file " + name + " has no requests");
    return entries;
}

} // namespace inferscope::compute::experiments
