#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/budget/MemoryBudget.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <algorithm>

namespace inferscope::cli {

namespace {

// The chosen (or best) Vulkan device's largest device-local heap; nullopt without a device.
std::optional<std::pair<std::string, std::uint64_t>> detectedDevice(const Arguments& a) {
    compute::ContextOptions options;
    options.deviceIndex = deviceArgument(a);
    try {
        compute::VulkanContext context(options);
        std::uint64_t bytes = 0;
        for (const auto& heap : context.info().heaps)
            if (heap.deviceLocal) bytes = std::max(bytes, heap.bytes);
        if (bytes == 0) return std::nullopt;
        return std::make_pair(context.info().name, bytes);
    } catch (const std::exception&) {
        if (options.deviceIndex) throw;
        return std::nullopt;
    }
}

} // namespace

static int runBudget(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{"--gpu", "--precision", "--kv", "--context", "--variant", "--reserve",
                        "--presets", "--device"},
                       {"--json", "--no-presets", "--no-detect"},
                       {}});
    if (a.positionals().size() > 1)
        throw UsageError("usage: budget [MODEL] [--gpu 8,16,24,80] [--precision fp16,int8,int4] "
                         "[--kv fp16] [--context N] [--variant as-built|mha|mqa] [--json]",
                         true);
    namespace ex = compute::experiments;
    ex::BudgetQuery query;
    query.deviceGiB = parseNumberList(a.valueOr("--gpu", "8,16,24,80"), "--gpu", 0.001, 1e6);
    query.precisions = parseNameList(a.valueOr("--precision", "fp16,int8,int4"));
    query.kvPrecision = a.valueOr("--kv", "fp16");
    query.contextPerUser = static_cast<std::uint32_t>(a.integer("--context", 4096, 1, 100'000'000));
    query.reserveBytes =
        static_cast<std::uint64_t>(a.number("--reserve", 0, 0, 1e6) * 1024.0 * 1024.0 * 1024.0);
    try {
        query.variant = ex::parseKvVariant(a.valueOr("--variant", "as-built"));
        for (const auto& p : query.precisions) ex::parseBudgetPrecision(p);
        ex::parseBudgetPrecision(query.kvPrecision);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    if (query.precisions.empty()) throw UsageError("--precision is empty");

    std::vector<ex::ModelShape> shapes;
    if (!a.positionals().empty()) {
        auto model = loadModelArgument(a.positional(0, "MODEL"));
        shapes.push_back(
            ex::shapeOf(model.config, model.weights.totalElements(),
                        model.config.name.empty() ? "loaded model" : model.config.name));
    }
    if (!a.flag("--no-presets")) {
        auto presets = ex::shippedModelPresets();
        shapes.insert(shapes.end(), presets.begin(), presets.end());
    }
    if (auto file = a.value("--presets")) {
        auto mine = ex::loadModelPresets(*file);
        shapes.insert(shapes.end(), mine.begin(), mine.end());
    }
    if (shapes.empty()) throw UsageError("budget: no model (give MODEL, or drop --no-presets)");
    if (!a.flag("--no-detect")) query.detectedDevice = detectedDevice(a);
    printTables(out, ex::memoryBudgetTables(shapes, query), a.flag("--json"));
    return 0;
}

extern const CliCommand budgetCommand{
    "budget",
    "  budget [MODEL] [--gpu 8,16,24,80] [--precision fp16,int8,int4] [--kv fp16|int8|int4]\n"
    "         [--context N] [--variant as-built|mha|mqa] [--reserve GIB] [--presets FILE]\n"
    "         [--no-presets] [--device N | --no-detect]\n"
    "                                   weights + KV per token x tokens <= device memory:\n"
    "                                   context tokens and users that fit, per model\n",
    runBudget, false};

} // namespace inferscope::cli
