#pragma once
// The backend options every Vulkan-using command shares (--backend, --device, --format,
// --no-cache), read into the lab session's BackendChoice; the session builds the backend.
#include "app/cli/Arguments.hpp"
#include "compute/engine/Backends.hpp"
#include "compute/engine/Engine.hpp"
#include "compute/session/LoadFootprint.hpp"

namespace inferscope::cli {

struct BackendArguments {
    compute::BackendChoice choice;
    bool useCache = true;
    bool vulkan() const { return choice.kind == compute::BackendChoice::Kind::Vulkan; }
    // The engine options they mean, for commands that size engines of their own (bench).
    compute::EngineOptions engineOptions() const;
};

// Reads --backend, --device, --format and --no-cache where the command declared them.
BackendArguments backendArguments(const Arguments& arguments);
// The Vulkan device asked for by --device, else INFERSCOPE_DEVICE (compute/vulkan/DeviceChoice:
// one rule for both); a bad value is a UsageError listing the devices. nullopt: neither asks.
std::optional<std::uint32_t> deviceArgument(const Arguments& arguments);
// Options every Vulkan-using command accepts.
void addBackendOptions(OptionSpec& spec);

// --device-memory and --host-memory: what the device and the host are taken to have for the
// load's footprint check (what a smaller machine would refuse); unset: measured.
void addMemoryOptions(OptionSpec& spec);
compute::MemoryAvailability memoryAvailability(const Arguments& arguments);
// "1073741824", "512MiB", "1.5GiB", "800MB" (KiB/MiB/GiB/TiB, or KB/MB/GB/TB as powers of 1000).
std::uint64_t parseByteSize(const std::string& text, const char* option);

} // namespace inferscope::cli
