// `inferscope-cli replay URL`: a request mix replayed against any OpenAI-compatible server
// (compute/experiments/replay), with vLLM's serving-benchmark metrics.
#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/replay/ReplayLab.hpp"

#include <fstream>
#include <iostream>

namespace inferscope::cli {

namespace {
// Documented bounds (the usage lists them).
constexpr long long kMaxReplayRequests = 1024;
constexpr long long kMaxConcurrency = 1024;

// "ttft:500,tpot:50" -> the SLOs in milliseconds.
compute::experiments::ReplaySlo parseSlo(const std::string& text) {
    compute::experiments::ReplaySlo slo;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        const auto colon = item.find(':');
        if (colon == std::string::npos)
            throw UsageError("--slo: '" + item + "' is not NAME:MS (ttft:500,tpot:50)");
        const std::string name = item.substr(0, colon);
        double ms = 0;
        try {
            std::size_t used = 0;
            ms = std::stod(item.substr(colon + 1), &used);
            if (used != item.size() - colon - 1) throw std::invalid_argument("trailing");
        } catch (const std::exception&) {
            throw UsageError("--slo: '" + item.substr(colon + 1) + "' is not a number of ms");
        }
        if (!(ms > 0 && ms <= 3.6e6))
            throw UsageError("--slo: " + name + " must be 0..3,600,000 ms");
        if (name == "ttft")
            slo.ttftMs = ms;
        else if (name == "tpot")
            slo.tpotMs = ms;
        else
            throw UsageError("--slo: '" + name + "' is neither ttft nor tpot");
        start = end + 1;
    }
    return slo;
}

void writeCsv(const std::string& path, const compute::Table& table) {
    std::ofstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("--csv: cannot write " + path);
    file << compute::renderCsv(table); // the window's CSV export, the same writer
    if (!file) throw std::runtime_error("--csv: writing " + path + " failed");
}
} // namespace

static int runReplay(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--mix", "--rate", "--concurrency", "--requests", "--model", "--api-key",
                     "--slo", "--seed", "--csv", "--timeout"},
                    {"--json", "--quiet", "--stop-at-eos"},
                    {}};
    Arguments a(args, spec);
    a.requirePositionals({"URL"});
    compute::experiments::ReplayRequest request;
    request.url = a.positional(0, "URL");
    if (a.value("--rate") && a.value("--concurrency"))
        throw UsageError("--rate and --concurrency: choose one (arrivals at a rate, or a fixed "
                         "number in flight)");
    request.rate = a.number("--rate", 0, 0, 10000);
    if (a.value("--rate") && request.rate <= 0) throw UsageError("--rate must be above 0");
    request.concurrency = std::uint32_t(a.integer("--concurrency", 1, 1, kMaxConcurrency));
    request.seed = std::uint64_t(a.integer("--seed", 1, 0, 1LL << 53));
    request.model = a.valueOr("--model", "");
    request.apiKey = a.valueOr("--api-key", "");
    request.timeoutSeconds = a.number("--timeout", 600, 1, 86400);
    request.ignoreEos = !a.flag("--stop-at-eos");
    if (auto slo = a.value("--slo")) request.slo = parseSlo(*slo);
    const auto requests = std::uint32_t(a.integer("--requests", 64, 1, kMaxReplayRequests));
    const std::string mix = a.valueOr("--mix", "chapter");
    try {
        // A file's first --requests when given; the chapter's mix scaled to --requests.
        request.mix = compute::experiments::replayMix(
            mix, mix == "chapter" || a.value("--requests") ? requests : 0, request.seed);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--mix: ") + e.what());
    }
    const bool quiet = a.flag("--quiet") || a.flag("--json");
    compute::experiments::ReplayResult result;
    try {
        result = compute::experiments::runReplay(request, [&](const std::string& stage) {
            if (!quiet) std::cerr << "replay: " << stage << "\n";
        });
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    // The window's Replay panel shows the same tables (ReplayLab).
    const auto tables = compute::experiments::replayTables(request, result);
    if (auto csv = a.value("--csv")) writeCsv(*csv, tables.back());
    nlohmann::json extra = {{"requests_completed", result.summary.completed},
                            {"requests_failed", result.summary.failed},
                            {"output_tokens", result.summary.outputTokens},
                            {"duration_s", result.durationSeconds},
                            {"request_throughput", result.summary.requestThroughput},
                            {"output_throughput", result.summary.outputThroughput},
                            {"goodput", result.summary.goodput}};
    printTables(out, tables, a.flag("--json"), extra);
    return result.summary.failed == 0 ? 0 : 1;
}

extern const CliCommand replayCommand{
    "replay",
    "  replay URL [--mix chapter|FILE] [--rate R | --concurrency N] [--requests N]\n"
    "           [--model NAME] [--api-key KEY] [--slo ttft:MS,tpot:MS] [--seed S]\n"
    "           [--csv FILE] [--timeout S] [--stop-at-eos]\n"
    "           (--requests 1..1024; --concurrency 1..1024; --rate up to 10,000/s)\n"
    "                                   a request mix against any OpenAI-compatible server:\n"
    "                                   TTFT, TPOT, ITL, E2EL, throughput, goodput\n",
    runReplay};

} // namespace inferscope::cli
