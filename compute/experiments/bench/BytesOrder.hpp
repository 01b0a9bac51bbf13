#pragma once
// Does a weight format with fewer bits decode faster? On a device whose decode step is bound
// by reading the weights, tokens/s follow bytes per weight; where arithmetic per weight or a
// fixed cost per dispatch bounds the step, they need not. `bench --formats` prints this note
// under its decode table so the answer comes from the run, not from the theory.
#include <string>
#include <vector>

namespace inferscope::compute {

struct FormatDecodeSpeed {
    std::string format;
    double bitsPerWeight = 0;
    double fastestTokensPerSecond = 0; // best of the timed repeats
    double slowestTokensPerSecond = 0; // worst of them (equal to the best with one repeat)
};

// Formats are compared when one has at least this factor more bits per weight than the
// other (int4 against int8, int8 against fp16); formats closer than that (int4-row against
// q4_1's 5 bits) are one class, and no order between them is expected.
inline constexpr double kBitsClassFactor = 1.25;

// One line: the formats by bits per weight with their tokens/s, then either that every pair
// at least kBitsClassFactor apart in bits is ordered (fewer bits, more tokens/s) or each pair
// that is not, and whether its tokens/s lie within the spread of the repeats (noise) or
// beyond it. `what` names the decode row, e.g. "batch 1, C = 256". Empty with fewer than two
// formats.
std::string bytesOrderNote(const std::string& what, std::vector<FormatDecodeSpeed> speeds);

} // namespace inferscope::compute
