#include "compute/experiments/quantization/SchemeBackends.hpp"

#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/engine/VulkanBackend.hpp"
#include "compute/experiments/quantization/QualityReport.hpp"
#include "compute/lab/LabContext.hpp"
#include "compute/lab/SessionEngineLease.hpp"

#include <algorithm>

namespace inferscope::compute::experiments {

std::optional<WeightFormat> gpuFormatOfScheme(const models::QuantSchemeSpec& scheme) {
    // fp32 keeps every stored value (each dequantizes exactly), so the stored blocks compute
    // with the same weights at a fraction of the memory.
    if (scheme.scheme == models::QuantScheme::AsStored ||
        scheme.scheme == models::QuantScheme::Fp32)
        return WeightFormat::AsStored;
    for (const auto& info : weightFormatTable())
        if (info.labScheme && *info.labScheme == scheme) return info.format;
    return std::nullopt;
}

namespace {

std::unique_ptr<DecoderBackend> referenceBackend(const models::ModelConfig& config,
                                                 models::ReferenceWeights weights,
                                                 unsigned threads) {
    auto reference =
        std::make_shared<const models::ReferenceTransformer>(config, std::move(weights), threads);
    return std::make_unique<CpuBackend>(reference, true);
}

class ReferenceSchemeBackends final : public SchemeBackends {
public:
    ReferenceSchemeBackends(const models::ModelConfig& config, const models::WeightStore& weights,
                            unsigned threads)
        : config_(config), weights_(weights), threads_(threads) {}

    DecoderBackend& use(const models::QuantSchemeSpec& scheme) override {
        current_.reset();
        current_ = referenceBackend(config_, quantizedReferenceWeights(weights_, scheme), threads_);
        return *current_;
    }
    std::string description() const override {
        return "the CPU reference, each scheme's weights quantized, then dequantized to fp32";
    }

private:
    models::ModelConfig config_;
    const models::WeightStore& weights_;
    unsigned threads_;
    std::unique_ptr<DecoderBackend> current_;
};

// The session's engine, re-packed per scheme and given back as it was.
class EngineSchemeBackends final : public SchemeBackends {
public:
    EngineSchemeBackends(LabContext& lab, Engine& engine)
        : lab_(lab), engine_(engine), lease_(lab, engine) {}

    DecoderBackend& use(const models::QuantSchemeSpec& scheme) override {
        separate_.reset();
        const auto format = gpuFormatOfScheme(scheme);
        if (!format || engine_.tuning().int8Activations) {
            if (std::find(fallbacks_.begin(), fallbacks_.end(), scheme.name()) == fallbacks_.end())
                fallbacks_.push_back(scheme.name());
            auto options = engine_.options();
            options.weightFormat = WeightFormat::F32;
            options.headFormat.reset();
            options.probes = {};
            options.cached = true;
            options.int8Activations = false;
            auto engine = std::make_shared<Engine>(
                engine_.config(), quantizedReferenceWeights(lab_.model().weights, scheme), options);
            separate_ = std::make_unique<VulkanBackend>(std::move(engine));
            return *separate_;
        }
        return lease_.repack(*format, WeightFormat::AsStored);
    }

    void finish() override {
        separate_.reset();
        lease_.giveBack();
    }

    std::string description() const override {
        std::string text = "the Vulkan engine of the session, each scheme's projection matrices "
                           "packed straight into its GPU format (fp32: the stored values as "
                           "stored), the output head as stored";
        if (!fallbacks_.empty()) {
            text += "; ";
            for (std::size_t i = 0; i < fallbacks_.size(); ++i)
                text += (i ? ", " : "") + fallbacks_[i];
            text += " as fp32 values (quantized, then dequantized) on an fp32 engine of their "
                    "own: ";
            text += engine_.tuning().int8Activations ? "the session rounds activations to int8"
                                                     : "no GPU kernel reads the scheme";
        }
        return text;
    }

private:
    LabContext& lab_;
    Engine& engine_;
    SessionEngineLease lease_;
    std::unique_ptr<DecoderBackend> separate_; // goes before the lease gives the engine back
    std::vector<std::string> fallbacks_;       // schemes run on an fp32 engine of their own
};

} // namespace

std::unique_ptr<SchemeBackends> referenceSchemeBackends(const models::ModelConfig& config,
                                                        const models::WeightStore& weights,
                                                        unsigned threads) {
    return std::make_unique<ReferenceSchemeBackends>(config, weights, threads);
}

std::unique_ptr<SchemeBackends> sessionSchemeBackends(LabContext& lab) {
    if (auto* engine = gpuEngineOf(lab))
        return std::make_unique<EngineSchemeBackends>(lab, *engine);
    return referenceSchemeBackends(lab.model().config, lab.model().weights);
}

} // namespace inferscope::compute::experiments
