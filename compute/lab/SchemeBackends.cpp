#include "compute/lab/SchemeBackends.hpp"

#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/engine/VulkanBackend.hpp"

namespace inferscope::compute {

WeightsBackendFactory schemeBackendFactory(LabContext& lab) {
    std::optional<EngineOptions> engineOptions;
    if (auto* engine = gpuEngineOf(lab)) {
        engineOptions = engine->options();
        engineOptions->weightFormat = WeightFormat::F32;
        engineOptions->probes = {}; // measurements, not profiles
        engineOptions->cached = true;
    }
    const auto config = lab.model().config;
    return [engineOptions,
            config](models::ReferenceWeights weights) -> std::unique_ptr<DecoderBackend> {
        if (engineOptions) {
            auto engine = std::make_shared<Engine>(config, std::move(weights), *engineOptions);
            return std::make_unique<VulkanBackend>(std::move(engine));
        }
        auto reference =
            std::make_shared<const models::ReferenceTransformer>(config, std::move(weights));
        return std::make_unique<CpuBackend>(reference, true);
    };
}

} // namespace inferscope::compute
