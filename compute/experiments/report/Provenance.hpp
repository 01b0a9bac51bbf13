#pragma once
// Where a report's numbers came from, as plain facts the front ends add to its provenance
// table: the model file's SHA-256, the CPU, the source tree's commit, the date.
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace inferscope::compute::experiments {

// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex digits.
std::string sha256Hex(std::span<const std::uint8_t> bytes);
// Of a file, read in chunks; throws std::runtime_error naming the file when it cannot be read.
// A folder (a safetensors model) hashes its files in name order, each name then its bytes.
std::string fileSha256(const std::filesystem::path& path);
// "model name (N logical cores)" from /proc/cpuinfo and the hardware concurrency.
std::string cpuDescription();
// The source tree's commit ("dd79c6f", "+ local changes" when dirty), found beside the
// shipped resources at run time; "unknown (...)" with the reason otherwise.
std::string sourceCommit();
// "2026-12-06 17:24:30 UTC".
std::string utcNow();
// The rows every front end adds: the model file (name, size, SHA-256), the CPU, the commit and
// the date, then `commandLine` as given.
std::vector<std::pair<std::string, std::string>>
standardProvenance(const std::filesystem::path& model, const std::string& commandLine);

} // namespace inferscope::compute::experiments
