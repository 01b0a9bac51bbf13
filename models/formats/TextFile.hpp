#pragma once
// Reading a user's text file (a perplexity corpus, a factual battery) whole, with a size cap:
// the path may name anything (a folder, /dev/zero, a FIFO, a 40 GB file), and each gets one
// clear error instead of a process that grows until the machine gives out.
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace inferscope::models {

// What went wrong, with the path first: "ruth.txt: is a folder, not a text file".
class TextFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A book is a few MB (the Bible is 4.3 MB); 32 MiB leaves room and still tokenizes in seconds.
inline constexpr std::uint64_t kMaxCorpusBytes = 32ull << 20;
// JSON settings such as the factual battery are a few KB.
inline constexpr std::uint64_t kMaxSmallTextBytes = 1ull << 20;

// The file's bytes, unchanged. Throws TextFileError when the path is missing, a folder, not
// readable, or holds more than maxBytes (devices and pipes are read up to maxBytes + 1).
std::string readTextFile(const std::filesystem::path& path,
                         std::uint64_t maxBytes = kMaxCorpusBytes);

} // namespace inferscope::models
