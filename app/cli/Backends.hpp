#pragma once
// The backend options every Vulkan-using command shares (--backend, --device, --format,
// --no-cache), read into the lab session's BackendChoice; the session builds the backend.
#include "app/cli/Arguments.hpp"
#include "compute/engine/Backends.hpp"
#include "compute/engine/Engine.hpp"

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
// Options every Vulkan-using command accepts.
void addBackendOptions(OptionSpec& spec);

} // namespace inferscope::cli
