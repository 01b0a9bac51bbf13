// loadModel's dispatch by what the path is, and where set-up keeps its data.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/RegularFile.hpp"

#include <array>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace inferscope::models {

namespace {

constexpr const char* defaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr const char* setupHint = "run scripts/setup to install it, or pass a model path";

std::filesystem::path environmentPath(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::filesystem::path(value) : std::filesystem::path();
}

} // namespace

LoadedModel loadModel(const std::filesystem::path& path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (error || !std::filesystem::exists(status))
        throw ModelError(path.string(), "", std::nullopt, "no such file or folder");
    if (std::filesystem::is_directory(status)) return loadSafetensorsModel(path);

    std::string magic;
    try {
        // RegularFile refuses a FIFO, socket or device (named) before open() could block.
        const RegularFile file = RegularFile::open(path);
        magic.resize(4);
        const auto got = ::pread(file.descriptor(), magic.data(), 4, 0);
        magic.resize(got > 0 ? std::size_t(got) : 0);
    } catch (const FileError& e) {
        throw ModelError(path.string(), "", std::nullopt, e.reason());
    }
    if (magic == "GGUF") return loadGgufModel(path);
    // A file inside a safetensors folder stands for the folder.
    const std::string name = path.filename().string();
    if (name.ends_with(".safetensors") || name == "model.safetensors.index.json" ||
        name == "config.json")
        return loadSafetensorsModel(path.parent_path().empty() ? "." : path.parent_path());
    throw ModelError(path.string(), "magic", 0,
                     "not a model: a GGUF file starts with \"GGUF\", a safetensors model is a "
                     "folder with config.json, tokenizer.json and model.safetensors");
}

std::filesystem::path cacheDirectory() {
    if (auto cache = environmentPath("INFERSCOPE_CACHE"); !cache.empty()) return cache;
    if (auto xdg = environmentPath("XDG_CACHE_HOME"); !xdg.empty()) return xdg / "inferscope";
    if (auto home = environmentPath("HOME"); !home.empty()) return home / ".cache" / "inferscope";
    throw ModelError("cannot find a cache folder: set INFERSCOPE_CACHE, XDG_CACHE_HOME or HOME");
}

std::filesystem::path resolveModelPath(const std::string& argument) {
    if (argument == "default") {
        const auto path = cacheDirectory() / "models" / defaultModelFile;
        if (!std::filesystem::exists(path))
            throw ModelError(path.string(), "", std::nullopt,
                             std::string("the default model is not installed: ") + setupHint);
        return path;
    }
    if (argument.starts_with("~/"))
        if (auto home = environmentPath("HOME"); !home.empty()) return home / argument.substr(2);
    return argument;
}

std::filesystem::path defaultCorpusPath() {
    return cacheDirectory() / "corpus" / "ruth-kjv.txt";
}

} // namespace inferscope::models
