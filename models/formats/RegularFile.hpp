#pragma once
// Every file a command reads goes through here first: a path may name a FIFO with no writer
// (open() would wait forever), a socket, a device, a folder or a file the user may not read.
// Each is refused at once, before anything blocks, with the path and the reason in one
// sentence; what is left is a regular file, opened for reading.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace inferscope::models {

// "PATH: is a named pipe (FIFO), not a regular file".
class FileError : public std::runtime_error {
public:
    FileError(const std::filesystem::path& path, const std::string& reason);
    const std::string& path() const { return path_; }
    const std::string& reason() const { return reason_; }

private:
    std::string path_;
    std::string reason_;
};

// An open, read-only descriptor of a regular file (RAII).
class RegularFile {
public:
    // Throws FileError: missing, not a regular file (named by kind), or not readable.
    // Opens without blocking (O_NONBLOCK, checked again with fstat on the descriptor, so a
    // path swapped for a FIFO in between is still refused), then reads normally.
    static RegularFile open(const std::filesystem::path& path);
    ~RegularFile();
    RegularFile(RegularFile&& other) noexcept;
    RegularFile& operator=(RegularFile&& other) noexcept;
    RegularFile(const RegularFile&) = delete;
    RegularFile& operator=(const RegularFile&) = delete;

    int descriptor() const { return fd_; }
    std::uint64_t size() const { return size_; }
    // The whole file; throws FileError when it holds more than maxBytes ("larger than the
    // 1 MiB allowed for <what>") or a read fails.
    std::string readAll(std::uint64_t maxBytes, const std::string& what = "a text file") const;

private:
    RegularFile(std::filesystem::path path, int fd, std::uint64_t size)
        : path_(std::move(path)), fd_(fd), size_(size) {}
    std::filesystem::path path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// "1 MiB", "64 KiB", "100 bytes".
std::string byteSizeText(std::uint64_t bytes);

} // namespace inferscope::models
