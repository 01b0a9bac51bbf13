#include "compute/experiments/replay/ReplayLab.hpp"

#include "compute/engine/Engine.hpp"
#include "compute/experiments/serve/OpenAiServer.hpp"
#include "compute/experiments/serve/ServingLoop.hpp"

#include <algorithm>

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

ReplayLab::Result ReplayLab::run(LabContext& lab, const Request& request,
                                 const JobControl& control) {
    Result out;
    out.request = request.replay;
    if (out.request.mix.empty())
        out.request.mix = replayMix(request.mixName, request.requests, request.replay.seed);
    auto replay = [&] {
        out.result = runReplay(out.request,
                               [&control](const std::string& stage) { control.report(stage, -1); });
    };
    if (!request.serveHere) {
        replay();
        return out;
    }
    auto& engine = requireGpuEngine(lab, "serving the model for the replay");
    ServingLoopOptions loopOptions;
    loopOptions.slotCount = std::min(request.serveSlots, engine.kvCache().maxSequences());
    loopOptions.maxWaiting = std::uint32_t(out.request.mix.size());
    loopOptions.heldSequences = loopOptions.slotCount;
    ServingLoop loop(engine, lab.tokenizer(), loopOptions);
    OpenAiServerOptions serverOptions;
    serverOptions.modelName = "inferscope";
    OpenAiServer server(loop, lab.tokenizer(), lab.chatFormat(), serverOptions);
    server.start();
    out.request.url = server.baseUrl();
    replay();
    server.stop();
    loop.stop();
    return out;
}

} // namespace inferscope::compute::experiments
