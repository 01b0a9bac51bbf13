#pragma once
// Stop strings over streamed text: text is handed on only once no stop string can still
// begin inside it, so a client never sees the start of a stop string that then matches.
#include <string>
#include <vector>

namespace inferscope::compute::experiments {

class StopStrings {
public:
    explicit StopStrings(std::vector<std::string> stops);
    // Appends text; returns what may be handed on now. After a match, stopped() is true and
    // the returned text ends just before the stop string; later calls return nothing.
    std::string add(const std::string& text);
    // At the end of a generation: the text held back for a possible match.
    std::string flush();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

} // namespace inferscope::compute::experiments
