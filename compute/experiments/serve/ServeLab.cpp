#include "compute/experiments/serve/ServeLab.hpp"

#include "compute/engine/Engine.hpp"
#include "compute/experiments/serve/OpenAiServer.hpp"
#include "compute/experiments/serve/ServingLoop.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

namespace inferscope::compute::experiments {

namespace {
Cell milliseconds(double seconds) {
    return seconds < 0 ? Cell{} : Cell{seconds * 1e3};
}

} // namespace

Table serveRequestsTable(const ServeSnapshot& snapshot) {
    Table table;
    table.id = "serve-requests";
    table.title = "Requests served (running, waiting and the latest finished)";
    table.addColumn("request")
        .addColumn("state")
        .addColumn("slot")
        .addColumn("prompt", "tokens")
        .addColumn("shared prefix", "tokens")
        .addColumn("generated", "tokens")
        .addColumn("blocks held")
        .addColumn("queue", "ms", 1)
        .addColumn("TTFT", "ms", 1)
        .addColumn("decode", "tokens/s", 1)
        .addColumn("elapsed", "s", 2)
        .addColumn("finish");
    for (const auto& r : snapshot.requests)
        table.addRow({std::int64_t(r.id), serveRequestStateName(r.state),
                      r.slot < 0 ? Cell{} : Cell{std::int64_t(r.slot)},
                      std::int64_t(r.promptTokens), std::int64_t(r.sharedPromptTokens),
                      std::int64_t(r.generatedTokens), std::int64_t(r.blocksHeld),
                      r.queueSeconds * 1e3, milliseconds(r.timeToFirstTokenSeconds),
                      r.generatedTokens >= 2 ? Cell{r.tokensPerSecond} : Cell{}, r.elapsedSeconds,
                      finishReasonName(r.finish)});
    table.notes.push_back("TTFT: arrival to the first generated token (queue and prefill "
                          "included); decode tokens/s after the first token; a shared prefix "
                          "is prompt positions forked from an earlier sequence's KV blocks "
                          "(prefilled once, reference-counted).");
    return table;
}

Table serveMetricsTable(const ServeSnapshot& snapshot) {
    const auto& m = snapshot.metrics;
    Table table;
    table.id = "serve-metrics";
    table.title = "Server metrics (what /metrics exposes)";
    table.addColumn("metric").addColumn("value", "", 3);
    auto row = [&](const std::string& name, Cell value) { table.addRow({name, value}); };
    row("uptime (s)", snapshot.uptimeSeconds);
    row("engine steps", std::int64_t(m.steps));
    row("batch-invariant", std::string(snapshot.batchInvariant ? "yes" : "no"));
    row("requests admitted", std::int64_t(m.requestsAdmitted));
    row("requests rejected (queue full)", std::int64_t(m.requestsRejected));
    row("finished: stop / length",
        std::to_string(m.finishedStop) + " / " + std::to_string(m.finishedLength));
    row("finished: cancelled / error",
        std::to_string(m.finishedCancelled) + " / " + std::to_string(m.finishedError));
    row("prompt tokens", std::int64_t(m.promptTokens));
    row("of them shared (forked)", std::int64_t(m.sharedPromptTokens));
    row("generated tokens", std::int64_t(m.generatedTokens));
    row("running / waiting", std::to_string(m.running) + " / " + std::to_string(m.waiting));
    row("KV blocks used / capacity",
        std::to_string(m.blocksUsed()) + " / " + std::to_string(m.blocksCapacity));
    row("KV usage (%)", m.kvUsageRatio() * 100.0);
    auto quantile = [&](const char* name, const LatencyHistogram& h) {
        if (h.count == 0) return row(std::string(name) + " p50 / p99 (ms)", Cell{});
        row(std::string(name) + " p50 / p99 (ms)",
            fixed(h.quantileBound(0.5) * 1e3, 0) + " / " + fixed(h.quantileBound(0.99) * 1e3, 0));
    };
    quantile("TTFT", m.timeToFirstToken);
    quantile("inter-token latency", m.interTokenLatency);
    quantile("end-to-end latency", m.endToEndLatency);
    table.notes.push_back("Percentiles are histogram bucket bounds (upper estimates), as a "
                          "Prometheus query over /metrics would give them.");
    table.notes.push_back(
        snapshot.batchInvariant
            ? "Batch-invariant: every request's sums run in one order whatever the batch, so a "
              "greedy answer equals the request served alone; prefill and wide batches pay "
              "for the small kernel tiles."
            : "Not batch-invariant: wide batches use larger kernel tiles that round in another "
              "order, so at a near tie a greedy answer can differ from the request served "
              "alone (--batch-invariant trades speed for equality).");
    return table;
}

ServeLab::Result ServeLab::run(LabContext& lab, const Request& request, const JobControl& control) {
    auto& engine = requireGpuEngine(lab, "serving");
    const auto& cache = engine.kvCache();
    // The loop caps the context at what one sequence can hold; slots x that must fit.
    const std::uint32_t context = std::min(request.contextTokens, cache.maxPositionsPerSequence());
    const std::uint64_t blocksPerRequest = (context + cache.blockSize() - 1) / cache.blockSize();
    if (blocksPerRequest * request.slotCount > cache.capacityBlocks())
        throw std::invalid_argument(
            std::to_string(request.slotCount) + " slots of " + std::to_string(context) +
            " positions need " + std::to_string(blocksPerRequest * request.slotCount) +
            " KV blocks; the cache has " + std::to_string(cache.capacityBlocks()) +
            " (fewer slots or a shorter context)");

    ServingLoopOptions loopOptions;
    loopOptions.slotCount = request.slotCount;
    loopOptions.maxWaiting = request.maxWaiting;
    loopOptions.contextTokens = request.contextTokens;
    loopOptions.heldSequences = request.slotCount;
    loopOptions.batchInvariant = request.batchInvariant;
    OpenAiServerOptions serverOptions;
    serverOptions.host = request.host;
    serverOptions.port = request.port;
    serverOptions.apiKey = request.apiKey;
    serverOptions.modelName =
        lab.model().config.name.empty() ? "inferscope" : lab.model().config.name;
    checkServerOptions(serverOptions); // before the loop takes the engine

    ServingLoop loop(engine, lab.tokenizer(), loopOptions);
    OpenAiServer server(loop, lab.tokenizer(), lab.chatFormat(), serverOptions);
    Result result;
    server.start();
    result.url = server.baseUrl() + "/v1";
    control.report("Serving on " + result.url + " (" + std::to_string(request.slotCount) +
                       " slots): send requests, then Stop",
                   -1);
    std::shared_ptr<const ServeSnapshot> handedOn;
    // Shared: the loop may still hold the callbacks when an exception unwinds this frame.
    auto scriptedLeft = std::make_shared<std::atomic<std::uint32_t>>(request.scriptedRequests);
    const char* const prompts[] = {
        "A KV cache keeps the keys and values of every earlier position, so a decode step "
        "computes attention for one new token instead of the whole sequence again.",
        "Continuous batching lets a finished request leave its slot at once, so the next "
        "waiting request joins the batch on the following step."};
    for (std::uint32_t i = 0; i < request.scriptedRequests; ++i) {
        CompletionRequest completion;
        completion.prompt = lab.tokenizer().encode(prompts[i % 2], true, false);
        completion.maxTokens = 8;
        completion.onEvent = [scriptedLeft](const CompletionEvent& event) {
            if (event.finish != FinishReason::None) --*scriptedLeft;
        };
        loop.submit(std::move(completion));
    }
    while (!control.cancelled() && (request.scriptedRequests == 0 || scriptedLeft->load() > 0)) {
        std::this_thread::sleep_for(request.snapshotEvery);
        // Every publish is a new snapshot; an idle loop publishes none, so nothing is handed on.
        auto snapshot = loop.snapshot();
        if (request.onSnapshot && snapshot != handedOn) request.onSnapshot(snapshot, result.url);
        handedOn = std::move(snapshot);
    }
    server.stop();
    loop.stop();
    result.last = loop.snapshot();
    if (request.onSnapshot) request.onSnapshot(result.last, result.url);
    return result;
}

std::vector<Table> ServeLab::tables(const Result& result) {
    if (!result.last) return {};
    return {serveRequestsTable(*result.last), serveMetricsTable(*result.last)};
}

} // namespace inferscope::compute::experiments
