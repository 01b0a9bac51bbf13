#include "models/formats/TextFile.hpp"

namespace inferscope::models {

std::string readTextFile(const std::filesystem::path& path, std::uint64_t maxBytes) {
    return RegularFile::open(path).readAll(maxBytes, "a text file");
}

} // namespace inferscope::models
