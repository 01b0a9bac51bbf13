#pragma once
// The one error type of models/: says which file, which field and at which byte offset
// a model file went wrong, so a user can tell a truncated download from a hostile file.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace inferscope::models {

class ModelError : public std::runtime_error {
public:
    ModelError(std::string file, std::string field, std::optional<std::uint64_t> offset,
               const std::string& what);
    // Error not tied to a place in a file (e.g. unsupported architecture).
    explicit ModelError(const std::string& what);

    const std::string& file() const { return file_; }
    const std::string& field() const { return field_; }
    std::optional<std::uint64_t> offset() const { return offset_; }

private:
    std::string file_;
    std::string field_;
    std::optional<std::uint64_t> offset_;
};

} // namespace inferscope::models
