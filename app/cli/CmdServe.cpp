// `inferscope-cli serve MODEL`: the engine behind an OpenAI-compatible HTTP API
// (compute/experiments/serve): continuous batching over real arrivals, prefix sharing,
// streamed tokens and Prometheus metrics, until SIGINT or SIGTERM.
#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/ServingEngine.hpp"
#include "compute/experiments/serve/OpenAiServer.hpp"
#include "compute/experiments/serve/ServeLab.hpp"
#include "compute/lab/LabContext.hpp"

#include <csignal>
#include <iostream>
#include <pthread.h>

namespace inferscope::cli {

namespace {
// Documented bounds (the usage lists them).
constexpr long long kMaxSlots = 256;
constexpr long long kMaxWaiting = 4096;
constexpr long long kMaxContext = 1 << 17;

// SIGINT and SIGTERM blocked in this thread and every thread it starts, so that sigwait()
// below receives them; the old mask comes back at the end.
class BlockedStopSignals {
public:
    BlockedStopSignals() {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        sigaddset(&set_, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set_, &old_);
    }
    ~BlockedStopSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    BlockedStopSignals(const BlockedStopSignals&) = delete;
    BlockedStopSignals& operator=(const BlockedStopSignals&) = delete;
    int wait() const {
        int signal = 0;
        sigwait(&set_, &signal);
        return signal;
    }

private:
    sigset_t set_{}, old_{};
};
} // namespace

static int runServe(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--host", "--port", "--slots", "--api-key", "--max-waiting", "--context",
                     "--name", "--max-body"},
                    {"--batch-invariant"},
                    {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    a.requirePositionals({"MODEL"});
    const BackendArguments backend = backendArguments(a);
    compute::experiments::ServingLoopOptions loopOptions;
    loopOptions.slotCount = std::uint32_t(a.integer("--slots", 8, 1, kMaxSlots));
    loopOptions.maxWaiting = std::uint32_t(a.integer("--max-waiting", 64, 0, kMaxWaiting));
    loopOptions.heldSequences = loopOptions.slotCount;
    loopOptions.batchInvariant = a.flag("--batch-invariant");
    const auto context = std::uint32_t(a.integer("--context", 2048, 16, kMaxContext));
    loopOptions.contextTokens = context;
    compute::experiments::OpenAiServerOptions serverOptions;
    serverOptions.host = a.valueOr("--host", "127.0.0.1");
    serverOptions.port = int(a.integer("--port", 8080, 0, 65535));
    serverOptions.apiKey = a.valueOr("--api-key", "");
    serverOptions.maxBodyBytes = std::size_t(a.integer("--max-body", 1 << 20, 1024, 64 << 20));
    try { // refused before the model loads
        compute::experiments::checkServerOptions(serverOptions);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const std::string model = a.positional(0, "MODEL");
    serverOptions.modelName = a.valueOr("--name", std::filesystem::path(model).stem().string());

    BlockedStopSignals signals;
    std::cerr << "serve: loading the model and sizing the KV cache\n";
    auto serving = openServingSession(model, backend, loopOptions.slotCount, context);
    if (!serving.capNote.empty()) std::cerr << "serve: " << serving.capNote << "\n";
    auto& engine = compute::requireGpuEngine(*serving.session, "serve");
    compute::experiments::ServingLoop loop(engine, serving.session->tokenizer(), loopOptions);
    compute::experiments::OpenAiServer server(loop, serving.session->tokenizer(),
                                              serving.session->chatFormat(), serverOptions);
    server.start();
    const auto& cache = engine.kvCache();
    out << "serving " << serverOptions.modelName << " on " << server.baseUrl() << " (slots "
        << loopOptions.slotCount << ", context " << loop.contextTokens() << ", KV blocks "
        << cache.capacityBlocks() << " of " << cache.blockSize() << " positions)" << std::endl;
    const int signal = signals.wait();
    std::cerr << "serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM") << ", shutting down\n";
    server.stop();
    loop.stop();
    const auto last = loop.snapshot();
    out << "served " << last->metrics.requestsAdmitted << " requests, "
        << last->metrics.generatedTokens << " tokens generated" << std::endl;
    // The tables the window's Serve panel shows, from the same functions (ServeLab).
    for (const auto& table : compute::experiments::ServeLab::tables({"", last}))
        out << "\n" << compute::renderText(table);
    return 0;
}

extern const CliCommand serveCommand{
    "serve",
    "  serve MODEL [--host 127.0.0.1] [--port 8080] [--slots N] [--api-key KEY]\n"
    "           [--max-waiting N] [--context N] [--name NAME] [--max-body BYTES]\n"
    "           [--batch-invariant]\n"
    "           (--slots 1..256; --max-waiting 0..4096; --context 16..131072 positions per\n"
    "            request; --port 0 picks a free port; a host other than loopback needs\n"
    "            --api-key; --max-body 1024..64 MiB; --batch-invariant: each greedy answer\n"
    "            equals the request served alone, at a cost in speed)\n"
    "                                   an OpenAI-compatible API (/v1/completions,\n"
    "                                   /v1/chat/completions, /v1/models, /health, /metrics)\n"
    "                                   over continuous batching, until SIGINT/SIGTERM\n",
    runServe};

} // namespace inferscope::cli
