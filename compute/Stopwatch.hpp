#pragma once
// The one clock the lab times its figures with (steady: never jumps with the wall clock).
#include <chrono>

namespace inferscope::compute {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}
inline double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace inferscope::compute
