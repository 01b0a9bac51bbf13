#include "models/formats/RegularFile.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace inferscope::models {

namespace {

// Why a file of this mode cannot be read as a file; empty for a regular file.
std::string kindRefusal(mode_t mode) {
    if (S_ISREG(mode)) return "";
    if (S_ISDIR(mode)) return "is a folder, not a file";
    if (S_ISFIFO(mode)) return "is a named pipe (FIFO), not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    if (S_ISCHR(mode)) return "is a character device, not a regular file";
    if (S_ISBLK(mode)) return "is a block device, not a regular file";
    return "is not a regular file";
}

std::string openRefusal(int error) {
    switch (error) {
    case ENOENT:
        return "no such file";
    case EACCES:
    case EPERM:
        return "permission denied: this user may not read it";
    case ENOTDIR:
        return "a part of the path is not a folder";
    case ELOOP:
        return "too many symbolic links";
    default:
        return std::string("cannot open: ") + std::strerror(error);
    }
}

} // namespace

FileError::FileError(const std::filesystem::path& path, const std::string& reason)
    : std::runtime_error(path.string() + ": " + reason), path_(path.string()), reason_(reason) {}

std::string byteSizeText(std::uint64_t bytes) {
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

RegularFile RegularFile::open(const std::filesystem::path& path) {
    // stat() first: it never blocks, and a socket cannot be open()ed at all (ENXIO).
    struct stat before {};
    if (::stat(path.c_str(), &before) != 0) throw FileError(path, openRefusal(errno));
    if (const auto refusal = kindRefusal(before.st_mode); !refusal.empty())
        throw FileError(path, refusal);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) throw FileError(path, openRefusal(errno));
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
        const std::string refusal =
            kindRefusal(opened.st_mode).empty() ? "cannot stat" : kindRefusal(opened.st_mode);
        ::close(fd);
        throw FileError(path, refusal);
    }
    // Regular files ignore O_NONBLOCK, but reads stay plain.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return RegularFile(path, fd, std::uint64_t(opened.st_size));
}

RegularFile::~RegularFile() {
    if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

std::string RegularFile::readAll(std::uint64_t maxBytes, const std::string& what) const {
    const std::string tooLarge =
        "larger than the " + byteSizeText(maxBytes) + " allowed for " + what;
    if (size_ > maxBytes)
        throw FileError(path_, tooLarge + " (" + std::to_string(size_) + " bytes)");
    // Read up to one byte past the cap: the file may grow while it is read.
    std::string content;
    char buffer[1 << 16];
    while (content.size() <= maxBytes) {
        const std::uint64_t room = maxBytes + 1 - content.size();
        const ssize_t got = ::read(fd_, buffer, std::min<std::uint64_t>(sizeof buffer, room));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw FileError(path_, std::string("read error: ") + std::strerror(errno));
        if (got == 0) break;
        content.append(buffer, std::size_t(got));
    }
    if (content.size() > maxBytes) throw FileError(path_, tooLarge);
    return content;
}

} // namespace inferscope::models
