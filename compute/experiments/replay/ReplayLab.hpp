#pragma once
// The replay as a lab job (the window's Replay panel) and the one place its tables are made,
// for the panel and `inferscope-cli replay` alike: the mix (the chapter's, or a mix file)
// replayed against an OpenAI-compatible server, summarized with vLLM's metric definitions.
#include "compute/experiments/replay/ReplayRun.hpp"
#include "compute/lab/JobControl.hpp"
#include "compute/lab/LabContext.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute::experiments {

struct ReplayLabRequest {
    ReplayRequest replay;        // its mix, when empty, made from mixName
    std::string mixName;         // "chapter" or a mix file's path
    std::uint32_t requests = 64; // the chapter mix's size; a file's first N (0: all)
    // Serve the session's model on a free loopback port for the replay and replay against
    // it (replay.url ignored): the window measures its own model over real HTTP.
    bool serveHere = false;
    std::uint32_t serveSlots = 8;
};

struct ReplayLabResult {
    ReplayRequest request; // as run, mix included
    ReplayResult result;
};

// The mix a name asks for. Throws std::invalid_argument for a file that cannot be read.
std::vector<MixEntry> replayMix(const std::string& mixName, std::uint32_t requests,
                                std::uint64_t seed);
// "replay-summary" (titled with the URL, model and arrivals), "replay-server-metrics",
// "replay-requests".
std::vector<Table> replayTables(const ReplayRequest& request, const ReplayResult& result);

struct ReplayLab {
    static constexpr std::string_view id = "replay";
    using Request = ReplayLabRequest;
    using Result = ReplayLabResult;
    // Needs no model unless serveHere: the server is elsewhere (another program, machine or
    // InferScope). Throws std::invalid_argument with serveHere on the CPU reference.
    static Result run(LabContext& lab, const Request& request, const JobControl& control);
    static std::vector<Table> tables(const Result& result) {
        return replayTables(result.request, result.result);
    }
};

} // namespace inferscope::compute::experiments
