#pragma once
// Waits in tests are watchdogs, not results: a sanitizer build runs the same code several
// times slower, so its CTest environment sets INFERSCOPE_TEST_TIME_SCALE (see
// cmake/InferScopeTest.cmake) and every wait, and every limit on how long the GUI thread may be
// away, stretches with it. A normal build leaves it unset: scale 1, nothing changes.
#include <cstdlib>

namespace inferscope::tests {

inline double testTimeScale() {
    static const double scale = [] {
        const char* text = std::getenv("INFERSCOPE_TEST_TIME_SCALE");
        const double value = text ? std::atof(text) : 1.0;
        return value >= 1.0 ? value : 1.0;
    }();
    return scale;
}

// A wait of `ms` milliseconds in a normal build, stretched in a slower one.
inline int scaledMs(int ms) {
    return static_cast<int>(ms * testTimeScale());
}

} // namespace inferscope::tests
