#pragma once
// The 16 levels of the NormalFloat4 (NF4) data type of QLoRA (Dettmers, Pagnoni, Holtzman,
// Zettlemoyer 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", section 3): quantiles of a
// standard normal distribution, rescaled to [-1, 1], with an exact zero. We compute them here
// from the inverse normal CDF rather than copying a table; the test checks them against the
// values the paper's appendix lists.
#include <array>

namespace inferscope::models {

// Sorted ascending: levels[0] == -1, levels[7] == 0, levels[15] == 1. Asymmetric by
// construction: 7 negative levels and 8 positive ones, so that zero is exact.
const std::array<float, 16>& nf4Levels();

// Index (0..15) of the level nearest to x (x is clamped to [-1, 1]); ties go to the lower level.
int nearestNf4Level(float x);

// Inverse of the standard normal CDF (the quantile function), for 0 < p < 1.
double normalQuantile(double p);

} // namespace inferscope::models
