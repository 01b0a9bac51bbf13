#include "compute/experiments/replay/ReplayLab.hpp"

namespace inferscope::compute::experiments {

std::vector<MixEntry> replayMix(const std::string& mixName, std::uint32_t requests,
                                std::uint64_t seed) {
    if (mixName.empty() || mixName == "chapter") return chapterMix(requests ? requests : 64, seed);
    auto mix = loadRequestMix(mixName);
    if (requests > 0 && mix.size() > requests) mix.resize(requests);
    return mix;
}

std::vector<Table> replayTables(const ReplayRequest& request, const ReplayResult& result) {
    const std::string how = request.rate > 0
                                ? "Poisson arrivals at " + fixed(request.rate, 2) + "/s"
                                : "concurrency " + std::to_string(request.concurrency);
    return {replaySummaryTable(result.summary, request.slo,
                               "Replay of " + std::to_string(request.mix.size()) +
                                   " requests against " + request.url + " (" + result.model + ", " +
                                   how + ")"),
            replayServerMetricsTable(result), replayRequestsTable(result.records)};
}

ReplayLab::Result ReplayLab::run(LabContext&, const Request& request, const JobControl& control) {
    Result out;
    out.request = request.replay;
    out.request.mix = replayMix(request.mixName, request.requests, request.replay.seed);
    out.result =
        runReplay(out.request, [&control](const std::string& stage) { control.report(stage, -1); });
    return out;
}

} // namespace inferscope::compute::experiments
