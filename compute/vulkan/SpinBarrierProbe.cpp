#include "compute/vulkan/SpinBarrierProbe.hpp"

#include "compute/vulkan/Buffer.hpp"
#include "compute/vulkan/CommandRecorder.hpp"
#include "compute/vulkan/Pipeline.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace inferscope::compute {

namespace {
struct SpinPush {
    std::uint32_t phases;
    std::uint32_t workgroups;
    std::uint32_t spinBudget;
};

// llvmpipe's loop limiter: an invocation's loops end after this many turns in all.
constexpr std::uint32_t kLoopTurnLimit = 65535;
} // namespace

SpinBarrierMeasurement measureSpinBarrier(const VulkanContext& context, std::uint32_t phases,
                                          int repeats) {
    SpinBarrierMeasurement result;
    result.workgroups = 2;
    result.phases = std::clamp<std::uint32_t>(phases, 3, 20000);
    const std::uint32_t lanes = std::max<std::uint32_t>(context.info().subgroupSize, 1);
    Buffer arrivals(context, 2 * sizeof(std::uint32_t), BufferKind::Readback, "spin arrivals");
    Pipeline pipeline(context, "spin_barrier", 1, sizeof(SpinPush), {lanes});
    CommandRecorder recorder(context, 4);

    // Best seconds of a run of `count` phases; false (and the reason set) when a workgroup
    // arrived fewer times than it should or gave up waiting.
    auto bestRun = [&](std::uint32_t count, double& best) {
        best = std::numeric_limits<double>::infinity();
        for (int r = 0; r < std::max(1, repeats); ++r) {
            recorder.begin();
            recorder.fill(arrivals, 0);
            const SpinPush push{count, result.workgroups, kLoopTurnLimit - 1000 - count};
            recorder.dispatch(pipeline, {{&arrivals}}, push, result.workgroups);
            recorder.submitAndWait();
            const auto counters = arrivals.read<std::uint32_t>(2);
            if (counters[1] != 0 || counters[0] != count * result.workgroups) {
                result.reason = "the " + std::to_string(result.workgroups) +
                                " workgroups of one dispatch did not run at the same time (" +
                                std::to_string(counters[1]) + " of " +
                                std::to_string(count * result.workgroups) +
                                " waits ran out: lavapipe with fewer pool threads than "
                                "workgroups, e.g. LP_NUM_THREADS=0 or 1, runs them one after "
                                "the other)";
                return false;
            }
            // The fill is in the same submission; it is negligible against thousands of phases
            // and the same in both runs, which the difference cancels.
            best = std::min(best, recorder.lastSubmitMicroseconds());
        }
        return true;
    };
    double shortRun = 0, longRun = 0;
    const std::uint32_t fewer = result.phases / 3;
    if (!bestRun(fewer, shortRun) || !bestRun(result.phases, longRun)) return result;
    result.measured = true;
    result.microsecondsPerPhase = std::max(0.0, longRun - shortRun) / (result.phases - fewer);
    return result;
}

} // namespace inferscope::compute
