#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/bench/BenchLab.hpp"
#include "compute/session/LabSession.hpp"

#include <iostream>

namespace inferscope::cli {

static int runBench(const CommandArgs& args, std::ostream& out) {
    OptionSpec spec{{"--formats", "--prompts", "--contexts", "--decode", "--batches", "--repeats"},
                    {"--json", "--no-breakdown", "--quiet"},
                    {}};
    addBackendOptions(spec);
    Arguments a(args, spec);
    if (a.positionals().size() != 1)
        throw UsageError(
            "usage: bench MODEL [--formats fp16,...] [--prompts 16,64,256,512] "
            "[--contexts 16,256,1024] [--decode N] [--batches 1,4] [--repeats N] [--json]");
    const BackendArguments backend = backendArguments(a);
    if (!backend.vulkan()) throw UsageError("bench measures the vulkan backend");
    const compute::EngineOptions engineOptions = backend.engineOptions();
    auto prompts = parsePositiveList(a.valueOr("--prompts", "16,64,256,512"), "--prompts");
    auto contexts = parsePositiveList(a.valueOr("--contexts", "16,256,1024"), "--contexts");
    auto batches = parsePositiveList(a.valueOr("--batches", "1"), "--batches");
    auto decodeSteps = static_cast<std::uint32_t>(a.integer("--decode", 32, 1, 4096));
    auto repeats = static_cast<std::uint32_t>(a.integer("--repeats", 1, 1, 100));
    std::vector<std::string> formats = parseNameList(
        a.valueOr("--formats", std::string(compute::weightFormatName(engineOptions.weightFormat))));
    // Every option checked before the model loads.
    if (formats.empty()) throw UsageError("--formats is empty: name at least one weight format");
    for (const auto& format : formats)
        if (!compute::weightFormatFromName(format))
            throw UsageError("--formats: unknown weight format '" + format +
                             "' (known: " + compute::weightFormatNames() + ")");
    bool quiet = a.flag("--quiet") || a.flag("--json");
    auto progress = [&](const std::string& what) {
        if (!quiet) std::cerr << "bench: " << what << "\n";
    };

    compute::experiments::BenchRequest request;
    request.formats = formats;
    request.prompts = prompts;
    request.contexts = contexts;
    request.batches = batches;
    request.decodeSteps = decodeSteps;
    request.repeats = repeats;
    request.kernelBreakdown = !a.flag("--no-breakdown");
    request.engine = engineOptions;
    compute::LabSession session;
    compute::LoadOptions load;
    load.buildBackend = false; // the lab builds one engine per format
    session.load(models::resolveModelPath(a.positional(0, "MODEL")), load);
    // The default lengths size themselves to a short context; lengths given are kept (and
    // refused by the lab when they do not fit).
    if (const std::uint32_t limit = session.model().config.contextLength) {
        auto fitting = [](std::vector<std::uint32_t> values, std::uint32_t most) {
            std::erase_if(values, [&](std::uint32_t v) { return v > most; });
            if (values.empty()) values.push_back(std::max(1u, most));
            return values;
        };
        if (!a.value("--prompts")) request.prompts = fitting(request.prompts, limit);
        if (!a.value("--decode"))
            request.decodeSteps = std::min(request.decodeSteps, std::max(1u, limit / 2));
        if (!a.value("--contexts"))
            request.contexts =
                fitting(request.contexts,
                        limit > request.decodeSteps + 4 ? limit - request.decodeSteps - 4 : 1);
    }
    compute::JobControl control;
    control.progress = [&](const std::string& stage, int) { progress(stage); };
    std::vector<compute::Table> tables;
    try {
        tables = compute::experiments::BenchLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    printTables(out, tables, a.flag("--json"));
    return 0;
}

extern const CliCommand benchCommand{
    "bench",
    "  bench MODEL [--formats fp16,q8_0] [--prompts 16,64,256,512] [--contexts 16,256,1024]\n"
    "        [--decode N] [--batches 1,4] [--repeats N] [--device N] [--int8-activations]\n"
    "                                   prompt and decode tokens/s, per-kernel time, probe\n"
    "                                   overhead, read bandwidth, dispatch floor and the\n"
    "                                   decode roofline; --int8-activations (vulkan, 4-bit\n"
    "                                   formats on lavapipe): activations rounded to 8 bits\n"
    "                                   per 32 columns, integer products, as llama.cpp's\n"
    "                                   CPU backend; --repeats N: the best of N timed runs\n"
    "                                   (the per-kernel table is of the first batch "
    "listed)\n",
    runBench};

} // namespace inferscope::cli
