#pragma once
// Builds the DecoderBackend a command asked for with --backend (vulkan by default, cpu for
// the reference) and the Vulkan options every command shares (--device, --format).
#include "app/cli/Arguments.hpp"
#include "compute/DecoderBackend.hpp"
#include "compute/Engine.hpp"
#include "models/LoadedModel.hpp"

#include <memory>
#include <string>

namespace inferscope::cli {

struct BackendChoice {
    std::string backend = "vulkan"; // "vulkan" or "cpu"
    bool useCache = true;
    compute::EngineOptions engine;   // device, weight format, probes
};

// Reads --backend, --device, --format and --no-cache where the command declared them.
BackendChoice backendChoice(const Arguments& arguments);
// Options every Vulkan-using command accepts.
void addBackendOptions(OptionSpec& spec);

std::unique_ptr<compute::DecoderBackend> makeBackend(const models::LoadedModel& model,
                                                     const BackendChoice& choice);

} // namespace inferscope::cli
