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
    // The message without file, field and offset.
    const std::string& reason() const { return reason_; }
    // The same error, said of `file` (for errors raised by code that never saw the path).
    ModelError inFile(const std::string& file) const;

private:
    std::string file_;
    std::string field_;
    std::optional<std::uint64_t> offset_;
    std::string reason_;
};

} // namespace inferscope::models
