#include "models/ModelError.hpp"

namespace inferscope::models {

namespace {
std::string describe(const std::string& file, const std::string& field,
                     std::optional<std::uint64_t> offset, const std::string& what) {
    std::string message = file;
    if (!field.empty()) message += (message.empty() ? "" : ": ") + field;
    if (offset) message += " (at byte " + std::to_string(*offset) + ")";
    return message.empty() ? what : message + ": " + what;
}
} // namespace

ModelError::ModelError(std::string file, std::string field, std::optional<std::uint64_t> offset,
                       const std::string& what)
    : std::runtime_error(describe(file, field, offset, what)), file_(std::move(file)),
      field_(std::move(field)), offset_(offset), reason_(what) {}

ModelError::ModelError(const std::string& what) : std::runtime_error(what), reason_(what) {}

ModelError ModelError::inFile(const std::string& file) const {
    if (!file_.empty() || file.empty()) return *this;
    return ModelError(file, field_, offset_, reason_);
}

} // namespace inferscope::models
