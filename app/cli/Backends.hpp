#pragma once
// Builds the DecoderBackend a command asked for with --backend.
#include "compute/DecoderBackend.hpp"
#include "models/LoadedModel.hpp"

#include <memory>
#include <string>

namespace inferscope::cli {

std::unique_ptr<compute::DecoderBackend> makeBackend(const models::LoadedModel& model,
                                                     const std::string& backend, bool useCache);

} // namespace inferscope::cli
