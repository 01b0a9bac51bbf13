#pragma once
// A read-only memory mapping of a whole file (RAII). Model tensors are views into it:
// a 100 MB model is never copied into the heap just to be read.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace inferscope::models {

class MappedFile {
public:
    // Throws ModelError if the file cannot be opened or mapped.
    explicit MappedFile(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
    std::uint64_t size() const { return size_; }
    const std::filesystem::path& path() const { return path_; }
    // Drops the mapping's pages from this process's resident memory (the data stays: the
    // mapping is read-only, so its pages are clean and come back from the page cache when
    // next read). For a model whose weights now live on the device.
    void releaseResidentPages() const;
    // The same for the pages that hold `range` (whole pages: a neighbour's bytes on a shared
    // page come back when read). A range outside the mapping is ignored. Returns whether any
    // part of the range lies in this mapping.
    bool releaseResidentPages(std::span<const std::uint8_t> range) const;

private:
    std::filesystem::path path_;
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace inferscope::models
