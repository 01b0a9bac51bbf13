#pragma once
// What loading a model on a backend will take, before anything is built: the bytes on the
// device (weights in the chosen GPU format, the KV cache the engine reserves, its step
// buffers and logits) and on the host (the largest transient of the upload, the device's
// buffers when the device is a CPU whose "device" memory is host memory, or everything the
// CPU reference holds), against what is there. LabSession::load refuses a model that does
// not fit, and the model card and `inferscope-cli info` show the same table.
//
// The estimate reads the model's shapes only (ModelConfig and the WeightStore's tensor list;
// no weight is dequantized or uploaded) and sizes everything with the functions the engine
// sizes its buffers with (packedMatrixSize, planMatrixChunks, planEngineBuffers,
// uploadedVectorBytes), so a layout is written down once.
#include "compute/Table.hpp"
#include "compute/engine/Backends.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/vulkan/VulkanContext.hpp"
#include "models/LoadedModel.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute {

// One thing a load allocates, and where its bytes live.
struct FootprintPart {
    std::string what; // "weights (fp16)", "KV cache (4,096 positions)", ...
    std::uint64_t deviceBytes = 0;
    std::uint64_t hostBytes = 0;
};

// What there is to hold a model. Unset: measured (the chosen device's largest device-local
// heap; the host's MemAvailable). Tests, and the CLI's --device-memory / --host-memory (what
// a smaller machine would say), set them.
struct MemoryAvailability {
    std::optional<std::uint64_t> deviceBytes;
    std::optional<std::uint64_t> hostBytes;
};

struct LoadFootprint {
    std::string model;               // the model's name, for the refusal
    std::string backend;             // "vulkan" or "cpu"
    std::string weightFormat;        // the GPU format's name; "fp32" for the CPU reference
    std::string device;              // the Vulkan device's name ("" for the CPU reference)
    bool deviceIsHostMemory = false; // a CPU-type Vulkan device (lavapipe)
    std::vector<FootprintPart> parts;
    // What is there; nullopt: unknown (that side is not checked).
    std::optional<std::uint64_t> deviceAvailableBytes, hostAvailableBytes;

    std::uint64_t deviceBytes() const;
    std::uint64_t hostBytes() const;
    bool fitsDevice() const;
    bool fitsHost() const;
    // Why the load is refused, naming both figures ("needs 1.9 GiB of device memory for fp16
    // weights, KV cache and activations; the device has 1.0 GiB"); empty when it fits.
    std::string refusal() const;
};

// The Engine's buffers for this model with these options on this device (the device's
// binding limit decides the row chunks and the logit rows, exactly as in the engine).
LoadFootprint vulkanLoadFootprint(const models::ModelConfig& config,
                                  const models::WeightStore& weights, const EngineOptions& options,
                                  const DeviceInfo& device);
// The CPU reference's host memory (the layout it assumes is stated at its definition). The
// reference reserves nothing up front; it is sized for the positions and the prompt chunk
// the engine's options reserve (kvCapacityTokens, maxTokensPerStep), so both backends are
// compared at the same context.
LoadFootprint cpuReferenceLoadFootprint(const models::ModelConfig& config,
                                        const models::WeightStore& weights,
                                        const EngineOptions& sizing = {});
// For a backend choice: the device from listDevices() (throws ComputeError without it), the
// engine options of the choice (engineOptionsFor), and what is available, measured unless
// `available` says.
LoadFootprint estimateLoadFootprint(const models::LoadedModel& model, const BackendChoice& choice,
                                    const MemoryAvailability& available = {});

// The largest device-local heap of a device (0 when it reports none).
std::uint64_t largestDeviceLocalHeapBytes(const DeviceInfo& device);
// MemAvailable of /proc/meminfo in bytes; nullopt where there is none.
std::optional<std::uint64_t> hostAvailableBytes();
std::optional<std::uint64_t> parseMemAvailable(std::string_view meminfo);

// The footprint as the model card and `info` show it: one row per part with its device and
// host bytes, then the totals, what is available and whether it fits.
Table loadFootprintTable(const LoadFootprint& footprint);

} // namespace inferscope::compute
