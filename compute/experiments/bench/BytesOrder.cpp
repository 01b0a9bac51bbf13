#include "compute/experiments/bench/BytesOrder.hpp"

#include "compute/Table.hpp"

#include <algorithm>
#include <cstdio>

namespace inferscope::compute {

namespace {
std::string bits(const FormatDecodeSpeed& s) {
    return fixed(s.bitsPerWeight, 2) + " bits";
}

// "45.5" with one repeat, "44.1-45.5" with a spread.
std::string speedRange(const FormatDecodeSpeed& s) {
    if (s.slowestTokensPerSecond >= s.fastestTokensPerSecond)
        return fixed(s.fastestTokensPerSecond, 1);
    return fixed(s.slowestTokensPerSecond, 1) + "-" + fixed(s.fastestTokensPerSecond, 1);
}
} // namespace

std::string bytesOrderNote(const std::string& what, std::vector<FormatDecodeSpeed> speeds) {
    if (speeds.size() < 2) return {};
    std::stable_sort(speeds.begin(), speeds.end(), [](const auto& a, const auto& b) {
        return a.bitsPerWeight < b.bitsPerWeight;
    });
    const std::string apart = "at least " + fixed(kBitsClassFactor, 2) + "x apart in bits";
    std::string note = "decode tokens/s by bits per weight (" + what + "): ";
    bool spreadKnown = false;
    for (std::size_t i = 0; i < speeds.size(); ++i) {
        if (i) note += ", ";
        note += speeds[i].format + " " + bits(speeds[i]) + " " + speedRange(speeds[i]);
        spreadKnown =
            spreadKnown || speeds[i].slowestTokensPerSecond < speeds[i].fastestTokensPerSecond;
    }
    std::string outOfOrder;
    std::size_t compared = 0, inverted = 0, beyondSpread = 0;
    for (std::size_t i = 0; i < speeds.size(); ++i) {
        for (std::size_t j = i + 1; j < speeds.size(); ++j) {
            const auto& fewer = speeds[i];
            const auto& more = speeds[j];
            if (more.bitsPerWeight < kBitsClassFactor * fewer.bitsPerWeight) continue;
            ++compared;
            if (fewer.fastestTokensPerSecond > more.fastestTokensPerSecond) continue;
            ++inverted;
            // The ranges over the repeats overlap: the order could go either way run to run.
            const bool withinSpread = fewer.fastestTokensPerSecond >= more.slowestTokensPerSecond;
            if (!withinSpread) ++beyondSpread;
            if (!outOfOrder.empty()) outOfOrder += "; ";
            outOfOrder += fewer.format + " (" + bits(fewer) + ") no faster than " + more.format +
                          " (" + bits(more) + "), " + (withinSpread ? "within" : "beyond") +
                          " the repeats' spread";
        }
    }
    if (compared == 0) {
        note += ". No two formats are " + apart + ": no order to check";
    } else if (inverted == 0) {
        note += ". Ordered: in all " + std::to_string(compared) + " pairs " + apart +
                ", the format with fewer bits decoded faster";
    } else {
        note += ". Not ordered in " + std::to_string(inverted) + " of " + std::to_string(compared) +
                " pairs " + apart + " (" + std::to_string(beyondSpread) +
                " beyond the repeats' spread): " + outOfOrder;
    }
    if (!spreadKnown) note += " (one timed run each: no spread to judge noise by, see --repeats)";
    return note;
}

} // namespace inferscope::compute
