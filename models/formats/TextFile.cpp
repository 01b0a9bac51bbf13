#include "models/formats/TextFile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace inferscope::models {

namespace {

std::string sizeText(std::uint64_t bytes) {
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
    throw TextFileError(path.string() + ": " + why);
}

} // namespace

std::string readTextFile(const std::filesystem::path& path, std::uint64_t maxBytes) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) fail(path, "no such file");
    if (std::filesystem::is_directory(status)) fail(path, "is a folder, not a text file");
    const std::string tooLarge =
        "larger than the " + sizeText(maxBytes) + " allowed for a text file";
    if (std::filesystem::is_regular_file(status)) {
        const auto size = std::filesystem::file_size(path, error);
        if (!error && size > maxBytes)
            fail(path, tooLarge + " (" + std::to_string(size) + " bytes)");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
    // Read in chunks up to one byte past the cap: devices and pipes have no size to check
    // first, and a regular file may grow while it is read.
    std::string content;
    char buffer[1 << 16];
    while (in && content.size() <= maxBytes) {
        const std::uint64_t room = maxBytes + 1 - content.size();
        in.read(buffer, static_cast<std::streamsize>(std::min<std::uint64_t>(sizeof buffer, room)));
        content.append(buffer, static_cast<std::size_t>(in.gcount()));
    }
    if (content.size() > maxBytes) fail(path, tooLarge);
    if (in.bad()) fail(path, "read error");
    return content;
}

} // namespace inferscope::models
