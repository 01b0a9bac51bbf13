#pragma once
// The backends the labs that compare weight quantization schemes (quality report, soft labels)
// run each scheme on, one scheme at a time. Only the projection matrices are quantized; the
// embedding table, the output head and the norms keep the stored values.
//
// On a Vulkan session the session's own engine is re-packed in place: each scheme is quantized
// straight into its GPU format from the stored tensors (no fp32 copy of the weights), and the
// session's format, probes and caching are given back when the object goes. The fp32 scheme
// runs the stored values as stored: dequantizing them to fp32 changes none. A scheme with no
// GPU format (int4-g32, nf4-b128, ...) runs on an fp32 engine of its own, as does every scheme
// where the session rounds activations to int8 (the lab measures the weights alone). On the
// CPU reference each scheme's quantized-then-dequantized fp32 weights are built in turn.
#include "compute/engine/DecoderBackend.hpp"
#include "compute/formats/WeightFormat.hpp"
#include "models/WeightStore.hpp"
#include "models/quant/WeightQuantizer.hpp"

#include <memory>
#include <optional>
#include <string>

namespace inferscope::compute {
class LabContext;
}

namespace inferscope::compute::experiments {

class SchemeBackends {
public:
    virtual ~SchemeBackends() = default;
    // The backend that runs `scheme`'s weights, reset. Valid until the next call; the
    // previous scheme's weights are freed before the next are built.
    virtual DecoderBackend& use(const models::QuantSchemeSpec& scheme) = 0;
    // Gives back what use() changed (the session's engine as it was); throws if it cannot.
    // Also done, with errors swallowed, when the object goes without it (a cancel).
    virtual void finish() {}
    // What the schemes used so far ran on, for a table note: "the CPU reference, each
    // scheme's weights quantized then dequantized to fp32", ...
    virtual std::string description() const = 0;
};

// The GPU format whose kernels compute with exactly the scheme's quantized values (AsStored
// for fp32 and as-stored), or nullopt when no kernel reads the scheme.
std::optional<WeightFormat> gpuFormatOfScheme(const models::QuantSchemeSpec& scheme);

// The CPU reference over each scheme's fp32 weights (`threads` 0: the machine's).
std::unique_ptr<SchemeBackends> referenceSchemeBackends(const models::ModelConfig& config,
                                                        const models::WeightStore& weights,
                                                        unsigned threads = 0);
// The session's backend: its engine re-packed per scheme on Vulkan, else the CPU reference.
std::unique_ptr<SchemeBackends> sessionSchemeBackends(LabContext& lab);

} // namespace inferscope::compute::experiments
