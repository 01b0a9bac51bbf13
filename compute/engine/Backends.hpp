#pragma once
// Which transformer runs a lab session: the Vulkan Engine on a device (in a weight format), or
// the CPU reference (the oracle: fp32 arithmetic over the stored tensors). The window's backend
// selector and the CLI's
// --backend/--device/--format/--no-cache both end in a BackendChoice, and one factory builds
// the backend for it.
#include "compute/engine/DecoderBackend.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute {

// The weight format the window and the CLI give the Vulkan engine until one is picked: each
// matrix in its stored type where a kernel reads it (the file's own codes, exact to the file;
// on a quantized file also the fewest bytes per step). On lavapipe (2 cores), default model,
// one run of `bench --formats as-stored,fp16`: decode 26.0 / 28.6 ms per step at C = 16 / 256
// as stored (q4_1 layers, q8_0 head) against 38.7 / 45.7 ms as fp16; a 64-token prompt 124.5
// against 87.1 tokens/s.
inline constexpr const char* kDefaultWeightFormat = "as-stored";

struct BackendChoice {
    enum class Kind { Cpu, Vulkan };
    Kind kind = Kind::Cpu;
    std::uint32_t deviceIndex = 0;
    std::string weightFormat;     // compute::weightFormatFromName; empty: the engine's default
    bool int8Activations = false; // EngineOptions::int8Activations
    bool operator==(const BackendChoice&) const = default;
    std::string key() const; // "cpu" or "vulkan:<device>" (the settings' form)
    static BackendChoice fromKey(std::string_view key);
};

struct BackendOption {
    std::string label;
    BackendChoice choice;
};
// Every Vulkan device (compute::listDevices), then the CPU reference; the first is the default.
std::vector<BackendOption> availableBackends();

using ResidualObserver = models::ReferenceTransformer::ResidualObserver;
// Builds the backend for a loaded model. observer, when set, wants the residual stream after
// each layer; a backend that cannot report it ignores it (the GPU reduces max |h| itself).
using BackendFactory = std::function<std::unique_ptr<DecoderBackend>(
    const models::LoadedModel& model, ResidualObserver observer)>;

// compute::CpuBackend over models::ReferenceTransformer, with the observer attached; it can
// switch between the cached and the really uncached mode (CachingSwitch).
BackendFactory cpuBackendFactory();
// The engine options a Vulkan choice means (device, weight format; the rest the defaults).
// Throws std::invalid_argument for a weight format the engine has no kernel for.
struct EngineOptions;
EngineOptions engineOptionsFor(const BackendChoice& choice);
// The Engine + VulkanBackend on choice's device and format, or the CPU reference for Kind::Cpu.
// Throws std::invalid_argument for a weight format the engine has no kernel for.
BackendFactory backendFactory(const BackendChoice& choice);

} // namespace inferscope::compute
