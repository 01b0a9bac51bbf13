#include "compute/engine/Backends.hpp"

#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/VulkanBackend.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <stdexcept>

namespace inferscope::compute {

namespace {
// The CPU reference in both modes over one shared transformer: switching costs nothing.
class SwitchableCpuBackend : public DecoderBackend, public CachingSwitch {
public:
    explicit SwitchableCpuBackend(std::shared_ptr<const models::ReferenceTransformer> reference)
        : cached_(reference, true), uncached_(reference, false) {}
    std::string name() const override { return current().name(); }
    void reset() override { current().reset(); }
    std::vector<float> append(std::span<const std::int32_t> tokens) override {
        return current().append(tokens);
    }
    std::vector<float> appendAllLogits(std::span<const std::int32_t> tokens) override {
        return current().appendAllLogits(tokens);
    }
    std::uint32_t vocabSize() const override { return current().vocabSize(); }
    std::uint32_t length() const override { return current().length(); }
    void truncate(std::uint32_t newLength) override { current().truncate(newLength); }
    std::vector<std::uint64_t> kvUsedBytesByLayer() const override {
        return current().kvUsedBytesByLayer();
    }
    void setCached(bool cached) override {
        if (cached == useCache_) return;
        current().reset();
        useCache_ = cached;
    }
    bool cached() const override { return useCache_; }
    CachingSwitch* cachingSwitch() override { return this; }

private:
    CpuBackend& current() { return useCache_ ? cached_ : uncached_; }
    const CpuBackend& current() const { return useCache_ ? cached_ : uncached_; }
    CpuBackend cached_, uncached_;
    bool useCache_ = true;
};
} // namespace

std::string BackendChoice::key() const {
    return kind == Kind::Cpu ? std::string("cpu") : "vulkan:" + std::to_string(deviceIndex);
}

BackendChoice BackendChoice::fromKey(std::string_view key) {
    BackendChoice choice;
    constexpr std::string_view prefix = "vulkan:";
    if (key.substr(0, prefix.size()) == prefix) {
        choice.kind = Kind::Vulkan;
        try {
            choice.deviceIndex = std::uint32_t(std::stoul(std::string(key.substr(prefix.size()))));
        } catch (const std::exception&) {
            choice.deviceIndex = 0;
        }
    }
    return choice;
}

std::vector<BackendOption> availableBackends() {
    std::vector<BackendOption> options;
    try {
        for (const auto& device : listDevices()) {
            BackendChoice choice;
            choice.kind = BackendChoice::Kind::Vulkan;
            choice.deviceIndex = device.index;
            options.push_back({"Vulkan: " + device.name + " (" + device.type + ")", choice});
        }
    } catch (const std::exception&) {
        // No Vulkan loader or driver: the CPU reference alone.
    }
    options.push_back({"CPU reference", BackendChoice{}});
    return options;
}

BackendFactory cpuBackendFactory() {
    return [](const models::LoadedModel& model, ResidualObserver observer) {
        // From the stored tensors: host memory stays what the file takes.
        auto reference =
            std::make_shared<models::ReferenceTransformer>(model.config, model.weights);
        if (observer) reference->setResidualObserver(std::move(observer));
        return std::make_unique<SwitchableCpuBackend>(std::move(reference));
    };
}

EngineOptions engineOptionsFor(const BackendChoice& choice) {
    EngineOptions options;
    options.device.deviceIndex = choice.deviceIndex;
    if (!choice.weightFormat.empty()) {
        auto format = weightFormatFromName(choice.weightFormat);
        if (!format)
            throw std::invalid_argument("the GPU engine has no weight format '" +
                                        choice.weightFormat + "'");
        options.weightFormat = *format;
    }
    options.int8Activations = choice.int8Activations;
    return options;
}

BackendFactory backendFactory(const BackendChoice& choice) {
    if (choice.kind == BackendChoice::Kind::Cpu) return cpuBackendFactory();
    const EngineOptions options = engineOptionsFor(choice);
    return [options](const models::LoadedModel& model,
                     ResidualObserver) -> std::unique_ptr<DecoderBackend> {
        auto engine = std::make_shared<Engine>(model, options);
        return std::make_unique<VulkanBackend>(std::move(engine));
    };
}

} // namespace inferscope::compute
