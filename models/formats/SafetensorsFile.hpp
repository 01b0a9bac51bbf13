#pragma once
// Safetensors reader: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and [begin, end) byte range in the data section, then the data.
// The file is memory-mapped; tensors are views into the mapping. The header is untrusted:
// its length is capped, its JSON parsed strictly (duplicate names refused), and the byte
// ranges must tile the data section exactly (no overlaps, no holes, nothing left over),
// each holding exactly shape x dtype bytes. Sharded checkpoints (an index JSON mapping
// tensor names to shard files in the same folder) are read by SafetensorsCheckpoint.
#include "models/formats/MappedFile.hpp"
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace inferscope::models {

struct SafetensorsTensor {
    std::string name;
    TensorType type = TensorType::F32; // F32, F16 or BF16
    std::vector<std::uint64_t> shape;  // as stored: outermost first ([out, in] for a matrix)
    std::uint64_t begin = 0;           // byte range relative to the data section
    std::uint64_t end = 0;
    std::uint64_t fileOffset = 0; // where the data starts in the file

    std::uint64_t elements() const; // 1 for a scalar (empty shape)
};

struct SafetensorsLimits {
    std::uint64_t maxHeaderBytes = 100ull << 20;
    std::uint64_t maxTensors = 1ull << 20;
    std::size_t maxDims = 8;
};

class SafetensorsFile {
public:
    static SafetensorsFile open(const std::filesystem::path& path,
                                const SafetensorsLimits& limits = {});

    const std::filesystem::path& path() const { return path_; }
    std::uint64_t headerBytes() const { return headerBytes_; }
    std::uint64_t dataOffset() const { return 8 + headerBytes_; }
    std::uint64_t fileBytes() const { return file_ ? file_->size() : 0; }
    // The optional "__metadata__" object (string values only).
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // In data order (ascending begin).
    const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
    const SafetensorsTensor* find(const std::string& name) const;
    std::span<const std::uint8_t> tensorData(const SafetensorsTensor& tensor) const;
    std::shared_ptr<const MappedFile> mapping() const { return file_; }

private:
    std::filesystem::path path_;
    std::shared_ptr<const MappedFile> file_;
    std::uint64_t headerBytes_ = 0;
    std::map<std::string, std::string> metadata_;
    std::vector<SafetensorsTensor> tensors_;
    std::map<std::string, std::size_t> byName_;
};

// Safetensors dtype name ("F32", "F16", "BF16") of a tensor type; throws for other types.
std::string safetensorsDtypeName(TensorType type);

// A whole checkpoint: one model.safetensors, or the shards named by an index JSON
// ("weight_map": tensor name -> shard file name in the index's folder). Shard names with
// path separators or "..", tensors found in two shards, tensors missing from the shard the
// index names, and shard tensors the index does not list are all refused.
class SafetensorsCheckpoint {
public:
    struct Entry {
        const SafetensorsFile* file = nullptr;
        const SafetensorsTensor* tensor = nullptr;
    };

    // folder/model.safetensors.index.json if present, else folder/model.safetensors.
    static SafetensorsCheckpoint openFolder(const std::filesystem::path& folder,
                                            const SafetensorsLimits& limits = {});
    static SafetensorsCheckpoint openIndex(const std::filesystem::path& indexFile,
                                           const SafetensorsLimits& limits = {});
    static SafetensorsCheckpoint openSingle(const std::filesystem::path& file,
                                            const SafetensorsLimits& limits = {});

    const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }
    const std::map<std::string, Entry>& tensors() const { return tensors_; }
    const Entry* find(const std::string& name) const;
    std::span<const std::uint8_t> tensorData(const Entry& entry) const {
        return entry.file->tensorData(*entry.tensor);
    }
    // Sum of the sizes of every file read (shards and index).
    std::uint64_t totalBytes() const { return totalBytes_; }

private:
    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
    std::map<std::string, Entry> tensors_;
    std::uint64_t totalBytes_ = 0;
};

} // namespace inferscope::models
