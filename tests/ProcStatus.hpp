#pragma once
// A field of /proc/self/status in KiB ("VmRSS:", "RssAnon:", "RssFile:"), or a count
// ("Threads:"); -1 where the field is missing. Tests of resident memory read it.
#include <cstring>
#include <fstream>
#include <string>

namespace inferscope::tests {

inline long procStatus(const char* field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
    return -1;
}

} // namespace inferscope::tests
