#include "app/cli/Arguments.hpp"
#include "app/cli/Backends.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "compute/experiments/attention/AttentionHeadLab.hpp"
#include "compute/session/LabSession.hpp"
#include "compute/vulkan/VulkanContext.hpp"
#include "models/LoadedModel.hpp"

#include <iostream>
#include <optional>

namespace inferscope::cli {

static int runAttention(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{"--lengths", "--dim", "--repeats", "--device"}, {"--json"}, {}});
    if (a.positionals().size() > 1)
        throw UsageError("usage: attention [MODEL] [--lengths 256,512,1024,2048,4096] [--dim 64] "
                         "[--repeats N] [--device N] [--json]",
                         true);
    namespace ex = compute::experiments;
    ex::AttentionHeadOptions options;
    // Every option is checked before the model is read; the model only gives --dim's default.
    const std::optional<long long> givenDim =
        a.value("--dim") ? std::optional(a.integer("--dim", 64, 1, 64)) : std::nullopt;
    options.lengths =
        parsePositiveList(a.valueOr("--lengths", "256,512,1024,2048,4096"), "--lengths");
    for (auto n : options.lengths)
        if (n < 2) throw UsageError("--lengths: a length must be at least 2");
    options.repeats = static_cast<int>(a.integer("--repeats", 3, 1, 100));
    std::uint32_t dim = givenDim ? std::uint32_t(*givenDim) : 64;
    if (!a.positionals().empty()) {
        auto model = loadModelArgument(a.positional(0, "MODEL"));
        if (!givenDim) {
            dim = model.config.headDim;
            if (dim > 64)
                throw UsageError("the model's head dimension is " + std::to_string(dim) +
                                 "; this kernel takes at most 64 (use --dim)");
        }
    }
    options.headDim = dim;
    ex::AttentionHeadRequest request;
    request.options = options;
    request.deviceIndex = deviceArgument(a).value_or(0);
    compute::LabSession session; // no model: the head's own buffers on the device
    compute::JobControl control;
    control.progress = [](const std::string& stage, int) {
        std::cerr << "attention: " << stage << "\n";
    };
    ex::AttentionHeadLab::Result result;
    try {
        result = ex::AttentionHeadLab::run(session, request, control);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    printTables(out, ex::AttentionHeadLab::tables(result), a.flag("--json"));
    const auto& points = result.points;
    for (const auto& p : points)
        if (p.uncachedMaxError > ex::kAttentionHeadTolerance ||
            p.cachedMaxError > ex::kAttentionHeadTolerance)
            throw std::runtime_error("attention: the GPU head disagrees with the CPU loop at n = " +
                                     std::to_string(p.length));
    return 0;
}

extern const CliCommand attentionCommand{
    "attention",
    "  attention [MODEL] [--lengths 256,512,1024,2048,4096] [--dim 64] [--repeats N]\n"
    "                                   one attention head, one step, uncached (n x n\n"
    "                                   scores) vs cached (1 x n): bytes and time\n",
    runAttention, false};

} // namespace inferscope::cli
