#pragma once
// Reading a user's text file (a perplexity corpus, a factual battery) whole, with a size cap:
// the path may name anything (a folder, /dev/zero, a FIFO, a 40 GB file), and each gets one
// clear error (RegularFile) instead of a wait that never ends or a process that grows until
// the machine gives out.
#include "models/formats/RegularFile.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace inferscope::models {

// What went wrong, with the path first: "ruth.txt: is a folder, not a file".
using TextFileError = FileError;

// A book is a few MB (the Bible is 4.3 MB); 32 MiB leaves room and still tokenizes in seconds.
inline constexpr std::uint64_t kMaxCorpusBytes = 32ull << 20;
// JSON settings such as the factual battery are a few KB.
inline constexpr std::uint64_t kMaxSmallTextBytes = 1ull << 20;

// The file's bytes, unchanged. Throws TextFileError when the path is missing, not a regular
// file (folder, FIFO, socket, device), not readable, or holds more than maxBytes.
std::string readTextFile(const std::filesystem::path& path,
                         std::uint64_t maxBytes = kMaxCorpusBytes);

} // namespace inferscope::models
