#include "models/formats/MappedFile.hpp"

#include "models/ModelError.hpp"
#include "models/formats/RegularFile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

namespace inferscope::models {

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
    // RegularFile refuses a FIFO, socket, device or folder before open() could block.
    std::optional<RegularFile> file;
    try {
        file.emplace(RegularFile::open(path));
    } catch (const FileError& e) {
        throw ModelError(path.string(), "", std::nullopt, e.reason());
    }
    size_ = static_cast<std::size_t>(file->size());
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file->descriptor(), 0);
        if (p == MAP_FAILED)
            throw ModelError(path.string(), "", std::nullopt,
                             std::string("cannot map file: ") + std::strerror(errno));
        data_ = static_cast<const std::uint8_t*>(p);
    }
}

void MappedFile::releaseResidentPages() const {
    releaseResidentPages(bytes());
}

bool MappedFile::releaseResidentPages(std::span<const std::uint8_t> range) const {
    if (!data_ || range.empty()) return false;
    const auto begin = std::max(reinterpret_cast<std::uintptr_t>(range.data()),
                                reinterpret_cast<std::uintptr_t>(data_));
    const auto end = std::min(reinterpret_cast<std::uintptr_t>(range.data() + range.size()),
                              reinterpret_cast<std::uintptr_t>(data_ + size_));
    if (begin >= end) return false;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto first = begin / page * page;
    const auto last =
        std::min((end + page - 1) / page * page,
                 (reinterpret_cast<std::uintptr_t>(data_ + size_) + page - 1) / page * page);
    // Advice only: a failure leaves the pages resident, which is merely what it was.
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    return true;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
        path_ = std::move(other.path_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

} // namespace inferscope::models
