#include "app/cli/Backends.hpp"

#include "app/cli/Arguments.hpp"
#include "compute/CpuBackend.hpp"

namespace inferscope::cli {

std::unique_ptr<compute::DecoderBackend> makeBackend(const models::LoadedModel& model,
                                                     const std::string& backend, bool useCache) {
    if (backend == "cpu") {
        auto reference = std::make_shared<const models::ReferenceTransformer>(
            model.config, models::dequantizeAll(model.weights));
        return std::make_unique<compute::CpuBackend>(reference, useCache);
    }
    throw UsageError("unknown backend '" + backend + "' (choose cpu)");
}

} // namespace inferscope::cli
