#include "app/cli/ServingEngine.hpp"

#include "compute/engine/VulkanBackend.hpp"
#include "compute/vulkan/VulkanContext.hpp"
#include "models/LoadedModel.hpp"

#include <algorithm>

namespace inferscope::cli {

ServingSession openServingSession(const std::string& model, const BackendArguments& backend,
                                  std::uint32_t sequences, std::uint32_t positions) {
    if (!backend.vulkan())
        throw UsageError("batching runs on the Vulkan engine (--backend vulkan); the CPU "
                         "reference serves one sequence");
    compute::EngineOptions options = backend.engineOptions();
    options.cached = true;
    const std::uint32_t block = options.blockSize;
    const std::uint32_t perSequence = (positions + block - 1) / block * block;
    const std::uint64_t want = std::uint64_t(sequences) * perSequence;
    // What the factory decided, read back after the load.
    struct Sizing {
        std::uint32_t capacity = 0;
        std::string note;
    };
    auto sizing = std::make_shared<Sizing>();
    ServingSession result;
    result.session = std::make_unique<compute::LabSession>([options, want, sizing, sequences](
                                                               const models::LoadedModel& loaded,
                                                               compute::ResidualObserver) {
        std::uint64_t wanted = want;
        // A quarter of the largest device-local heap for the KV cache at most.
        std::uint64_t heap = 0;
        for (const auto& device : compute::listDevices())
            if (device.index == options.device.deviceIndex)
                for (const auto& h : device.heaps)
                    if (h.deviceLocal) heap = std::max(heap, h.bytes);
        const std::uint64_t perToken = std::max<std::uint64_t>(1, loaded.config.kvBytesPerToken());
        if (heap > 0 && wanted * perToken > heap / 4) {
            const std::uint64_t capped = heap / 4 / perToken;
            sizing->note = "device memory: the KV cache was held to " + std::to_string(capped) +
                           " tokens (a quarter of the " + compute::humanBytes(double(heap)) +
                           " heap)";
            wanted = capped;
        }
        auto engineOptions = options;
        engineOptions.kvCapacityTokens =
            std::uint32_t(std::max<std::uint64_t>(wanted, options.kvCapacityTokens));
        engineOptions.maxSequences = std::max(options.maxSequences, sequences);
        sizing->capacity = engineOptions.kvCapacityTokens;
        auto engine = std::make_shared<compute::Engine>(loaded, engineOptions);
        return std::make_unique<compute::VulkanBackend>(std::move(engine));
    });
    compute::LoadOptions load;
    load.choice = backend.choice;
    result.session->load(models::resolveModelPath(model), load);
    result.kvCapacityTokens = sizing->capacity;
    result.capNote = sizing->note;
    return result;
}

} // namespace inferscope::cli
