#include "compute/lab/LabContext.hpp"

#include "compute/engine/Engine.hpp"

#include <stdexcept>

namespace inferscope::compute {

Engine* gpuEngineOf(LabContext& lab) {
    return lab.hasBackend() ? lab.backend().gpuEngine() : nullptr;
}

Engine& requireGpuEngine(LabContext& lab, const std::string& what) {
    if (auto* engine = gpuEngineOf(lab)) return *engine;
    const std::string backend = lab.hasBackend() ? lab.backend().name() : std::string("no");
    throw std::invalid_argument(what + " runs on the Vulkan engine; the " + backend +
                                " backend serves one sequence");
}

} // namespace inferscope::compute
