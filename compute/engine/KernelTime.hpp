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
};

// Adds a kernel's dispatches and time into a list with one entry per kernel (first seen first).
void addKernelTime(std::vector<KernelTime>& total, const KernelTime& time);
void addKernelTimes(std::vector<KernelTime>& total, const std::vector<KernelTime>& step);

} // namespace inferscope::compute
