#include "models/ModelError.hpp"

namespace inferscope::models {

namespace {
std::string describe(const std::string& file, const std::string& field,
                     std::optional<std::uint64_t> offset, const std::string& what) {
    std::string message = file;
    if (!field.empty()) message += ": " + field;
    if (offset) message += " (at byte " + std::to_string(*offset) + ")";
    return message + ": " + what;
}
} // namespace

ModelError::ModelError(std::string file, std::string field, std::optional<std::uint64_t> offset,
                       const std::string& what)
    : std::runtime_error(describe(file, field, offset, what)), file_(std::move(file)),
      field_(std::move(field)), offset_(offset) {}

ModelError::ModelError(const std::string& what) : std::runtime_error(what) {}

} // namespace inferscope::models
