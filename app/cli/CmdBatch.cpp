// `inferscope-cli batch MODEL`: chapter item 6, the batched decode sweep and its knee.
#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "app/cli/ServingEngine.hpp"
#include "compute/experiments/batching/BatchingLab.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

namespace inferscope::cli {

namespace {
std::vector<std::uint32_t> parseBatches(const std::string& text) {
    std::vector<std::uint32_t> values;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        std::size_t used = 0;
        unsigned long value = 0;
        try {
            value = std::stoul(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || item[0] == '-')
            throw UsageError("--batches expects batch sizes like 1,2,4,8, got '" + item + "'");
        if (value == 0) throw UsageError("--batches: a batch of 0 sequences decodes nothing");
        if (value > 1024)
            throw UsageError("--batches: " + item +
                             " sequences is more than the 1024 the lab runs");
        values.push_back(std::uint32_t(value));
    }
    if (values.empty()) throw UsageError("--batches is empty");
    return values;
}
} // namespace

static int runBatch(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--batches", "--context", "--steps"}, {"--json", "--quiet"}, {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    a.requirePositionals({"MODEL"});
    const BackendArguments backend = backendArguments(a);
    compute::experiments::BatchingRequest request;
    if (auto list = a.value("--batches")) request.batches = parseBatches(*list);
    request.context = std::uint32_t(a.integer("--context", 64, 1, 1 << 20));
    request.steps = std::uint32_t(a.integer("--steps", 8, 1, 4096));
    const bool quiet = a.flag("--quiet") || a.flag("--json");

    const auto model = models::loadModel(models::resolveModelPath(a.positional(0, "MODEL")));
    // Defaults size themselves to a short context (a 16-token model decodes 4 steps after 11
    // tokens); values given are kept, and refused below if they do not fit.
    if (const std::uint32_t limit = model.config.contextLength) {
        if (!a.value("--steps")) request.steps = std::min(request.steps, std::max(1u, limit / 4));
        if (!a.value("--context") && request.context + request.steps + 1 > limit)
            request.context = limit > request.steps + 1 ? limit - request.steps - 1 : 1;
    }
    const std::uint32_t positions = request.context + request.steps + 1;
    if (model.config.contextLength && positions > model.config.contextLength)
        throw UsageError("--context " + std::to_string(request.context) + " plus " +
                         std::to_string(request.steps + 1) +
                         " decode steps exceeds the model's context of " +
                         std::to_string(model.config.contextLength) + " tokens");
    if (!quiet) std::cerr << "batch: loading the model and sizing the KV cache\n";
    const auto maxBatch = *std::max_element(request.batches.begin(), request.batches.end());
    // Each B runs working copies forked from prefilled templates: room for twice the sequences.
    auto serving =
        openServingSession(a.positional(0, "MODEL"), backend, 2 * maxBatch + 1, positions);
    compute::JobControl control;
    control.progress = [&](const std::string& stage, int) {
        if (!quiet) std::cerr << "batch: " << stage << "\n";
    };
    auto tables = compute::experiments::BatchingLab::run(*serving.session, request, control);
    if (!serving.capNote.empty()) tables.front().notes.push_back(serving.capNote + ".");
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand batchCommand{
    "batch",
    "  batch MODEL [--batches 1,2,4,...,64] [--context C] [--steps N] [--format F]\n"
    "                                   batched decode: tokens/s and latency per B, the\n"
    "                                   knee, the roofline, batched vs alone tokens\n",
    runBatch};

} // namespace inferscope::cli
