// `inferscope-cli schedule MODEL`: chapter item 7, static vs continuous batching, run on the
// engine and simulated from its measured step costs.
#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "app/cli/ServingEngine.hpp"
#include "compute/experiments/serving/SchedulerLab.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>

namespace inferscope::cli {

namespace {
// Documented bounds (the usage lists them): requests run on the engine; a simulated
// schedule streams its steps and keeps one number per step (8 bytes: 16 Mi steps are
// 128 MiB), and its work grows with the slot-steps it builds (2^30 of them take seconds).
constexpr std::int64_t kMaxRunRequests = 1024;
constexpr std::uint64_t kMaxSimulatedSteps = 1ull << 24;
constexpr std::uint64_t kMaxSimulatedSlotSteps = 1ull << 30;
} // namespace

static int runSchedule(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--slots", "--requests", "--seed", "--mix", "--median", "--longest", "--total",
                     "--prompt-tokens", "--verify", "--simulate", "--simulate-slots",
                     "--chunk-tokens", "--prefix-requests"},
                    {"--json", "--quiet"},
                    {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    a.requirePositionals({"MODEL"});
    const BackendArguments backend = backendArguments(a);
    compute::experiments::SchedulingRequest request;
    request.slotCount = std::uint32_t(a.integer("--slots", 8, 0, 1024));
    if (request.slotCount == 0) throw UsageError("--slots: zero slots serve no request");
    auto& mix = request.mix;
    // Each request runs on the engine: 1,024 is sixteen times the chapter's mix.
    mix.requests = std::uint32_t(a.integer("--requests", 64, 0, kMaxRunRequests));
    if (mix.requests == 0) throw UsageError("--requests: an empty mix has nothing to schedule");
    mix.seed = std::uint64_t(a.integer("--seed", 1, 0, 1LL << 53));
    mix.median = std::uint32_t(a.integer("--median", 18, 1, 1 << 20));
    mix.longest = std::uint32_t(a.integer("--longest", 231, 1, 1 << 20));
    // The chapter's 1,874 tokens for 64 requests, scaled to another count.
    mix.total = std::uint32_t(
        a.integer("--total", std::llround(1874.0 * mix.requests / 64.0), 1, 1LL << 31));
    request.promptTokens = std::uint32_t(a.integer("--prompt-tokens", 8, 1, 4096));
    request.verifyRequests = std::uint32_t(a.integer("--verify", 3, 0, 100000));
    request.simulateRequests = std::uint32_t(a.integer("--simulate", 0, 0, 1000000));
    request.simulateSlots = std::uint32_t(a.integer("--simulate-slots", 0, 0, 65536));
    request.chunkTokens = std::uint32_t(a.integer("--chunk-tokens", 64, 0, 1 << 20));
    if (request.chunkTokens == 0)
        throw UsageError("--chunk-tokens: a chunk of 0 prompt tokens per step never prefills");
    // Bounded before any work. The static schedule, the longest, has ceil(N / S) groups of
    // at most (longest + prompt + 1) steps; chunked prefill adds at most N x prompt / chunk
    // steps of prompt alone.
    if (request.simulateRequests > 0) {
        const std::uint64_t n = request.simulateRequests;
        const std::uint64_t slots =
            request.simulateSlots ? request.simulateSlots : request.slotCount;
        const std::uint64_t steps =
            (n + slots - 1) / slots * (std::uint64_t(mix.longest) + request.promptTokens + 1) +
            (n * request.promptTokens + request.chunkTokens - 1) / request.chunkTokens;
        const std::string what = "--simulate " + std::to_string(n) + " with " +
                                 std::to_string(slots) + " slots needs a schedule of up to ";
        if (steps > kMaxSimulatedSteps)
            throw UsageError(what + std::to_string(steps) + " steps, over the limit of " +
                             std::to_string(kMaxSimulatedSteps) +
                             " (fewer requests, more slots or a shorter --longest)");
        if (steps * slots > kMaxSimulatedSlotSteps)
            throw UsageError(what + std::to_string(steps * slots) +
                             " slot-steps, over the limit of " +
                             std::to_string(kMaxSimulatedSlotSteps) +
                             " (fewer requests, fewer slots or a shorter --longest)");
    }
    request.prefixRequests = std::uint32_t(a.integer("--prefix-requests", 8, 0, 1024));
    if (auto file = a.value("--mix")) request.mixFile = *file;
    const bool quiet = a.flag("--quiet") || a.flag("--json");

    // Size the KV cache from the mix before loading: the longest request, every slot.
    std::uint32_t promptTokens = request.promptTokens, longest = 0;
    try {
        if (request.mixFile) {
            promptTokens = 0;
            // Byte-level tokenizers make at most one token per byte, plus BOS/EOS.
            for (const auto& entry : compute::experiments::loadRequestMix(*request.mixFile)) {
                promptTokens = std::max(promptTokens, std::uint32_t(entry.prompt.size() + 2));
                longest = std::max(longest, entry.outputTokens);
            }
        } else {
            for (auto length : compute::experiments::skewedLengths(mix))
                longest = std::max(longest, length);
        }
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (!quiet) std::cerr << "schedule: loading the model and sizing the KV cache\n";
    // Prefix sharing holds its requests and the prefix at once (short sequences: the cache
    // sized for the slots' long ones has room for them).
    auto serving = openServingSession(a.positional(0, "MODEL"), backend,
                                      std::max(request.slotCount, request.prefixRequests + 1),
                                      promptTokens + longest + 16);
    compute::JobControl control;
    control.progress = [&](const std::string& stage, int) {
        if (!quiet) std::cerr << "schedule: " << stage << "\n";
    };
    std::vector<compute::Table> tables;
    try {
        tables = compute::experiments::SchedulerLab::run(*serving.session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what()); // lengths over the context, a mix that does not fit
    }
    if (!serving.capNote.empty()) tables.front().notes.push_back(serving.capNote + ".");
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand scheduleCommand{
    "schedule",
    "  schedule MODEL [--slots N] [--requests N] [--seed S] [--mix FILE]\n"
    "           [--median M --longest L --total T] [--simulate N [--simulate-slots S]]\n"
    "           [--chunk-tokens K] [--prefix-requests N]\n"
    "           (--requests 1..1024; --simulate N (at most 1,000,000) with S slots: at most\n"
    "            16,777,216 steps of ceil(N/S) x (longest + prompt + 1) + N x prompt / K, and\n"
    "            1,073,741,824 slot-steps: those steps x S)\n"
    "                                   static vs continuous batching, run and simulated;\n"
    "                                   chunked prefill simulated; the KV block map;\n"
    "                                   prefix sharing with and without forkSequence\n",
    runSchedule};

} // namespace inferscope::cli
