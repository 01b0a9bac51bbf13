#pragma once
// Shared by the fuzz targets: the readers under test take paths (they map files), so each
// input is written to a per-process scratch file, on tmpfs where there is one.
#include "models/synthetic/SyntheticModel.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace inferscope::fuzz {

// Removed at exit by its destructor (an atexit handler registered while the static is built
// would run after the static is gone).
struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder() {
        const std::filesystem::path base = std::filesystem::exists("/dev/shm")
                                               ? std::filesystem::path("/dev/shm")
                                               : std::filesystem::temp_directory_path();
        path = base / ("inferscope-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
    }
    ~ScratchFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
};

inline const std::filesystem::path& scratchFolder() {
    static const ScratchFolder folder;
    return folder.path;
}

inline std::filesystem::path writeScratch(const std::string& name, const std::uint8_t* data,
                                          std::size_t size) {
    const auto path = scratchFolder() / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
}

// The small model whose files seed the corpora and back the folder targets.
inline models::SyntheticModelSpec seedModelSpec() {
    models::SyntheticModelSpec spec;
    spec.layers = 1;
    spec.hiddenSize = 16;
    spec.heads = 2;
    spec.kvHeads = 1;
    spec.headDim = 8;
    spec.ffnSize = 24;
    spec.vocabSize = 272;
    spec.contextLength = 64;
    return spec;
}

} // namespace inferscope::fuzz
