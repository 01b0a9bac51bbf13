#include "compute/experiments/attention/AttentionHeadLab.hpp"

#include "compute/engine/Engine.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <memory>

namespace inferscope::compute::experiments {

AttentionHeadLab::Result AttentionHeadLab::run(LabContext& lab, const Request& request,
                                               const JobControl& control) {
    std::unique_ptr<VulkanContext> own;
    const VulkanContext* context = nullptr;
    if (auto* engine = lab.hasModel() ? gpuEngineOf(lab) : nullptr) {
        context = &engine->context();
    } else {
        ContextOptions options;
        options.deviceIndex = request.deviceIndex;
        own = std::make_unique<VulkanContext>(options);
        context = own.get();
    }
    const auto& lengths = request.options.lengths;
    std::size_t done = 0;
    Result result;
    result.points = measureAttentionHead(*context, request.options, [&](std::uint32_t n) {
        control.throwIfCancelled();
        control.report("One attention head at n = " + std::to_string(n) + "…",
                       int(100 * done++ / std::max<std::size_t>(1, lengths.size())));
    });
    result.headDim = request.options.headDim;
    result.device = context->info().name;
    return result;
}

std::vector<Table> AttentionHeadLab::tables(const Result& result) {
    if (result.points.empty()) return {};
    return {attentionHeadTable(result.points, result.headDim, result.device)};
}

} // namespace inferscope::compute::experiments
