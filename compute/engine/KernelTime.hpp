#pragma once
// One kernel's share of a step, as the GPU timestamps measured it (profiling mode).
#include <cstdint>
#include <string>
#include <vector>

namespace inferscope::compute {

struct KernelTime {
    std::string kernel; // "qkv_rope", "attention", ...
    std::uint32_t dispatches = 0;
    double microseconds = 0.0;
    // Totals over steps (addStepKernelTimes): how many steps were added and the sum of each
    // step's time squared, for the spread from step to step.
    std::uint32_t steps = 0;
    double squaredStepMicroseconds = 0.0;

    // The sample standard deviation of the per-step times; 0 below two steps.
    double stepStandardDeviation() const;
};

// Adds a kernel's entry (every field) into a list with one entry per kernel (first seen first).
void addKernelTime(std::vector<KernelTime>& total, const KernelTime& time);
void addKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& times);
// Adds one step's per-kernel times to a total over steps, counting the step and its square.
void addStepKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& step);

} // namespace inferscope::compute
