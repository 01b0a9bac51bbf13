#pragma once
// GGUF (versions 2 and 3) reader: metadata of every value type, arrays included, tensor
// infos and alignment. The file is memory-mapped; tensors are views into the mapping.
// Every count, length, offset and size is checked against the file and against overflow
// before use; errors are ModelErrors naming the file, the field and the byte offset.
#include "models/formats/MappedFile.hpp"
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace inferscope::models {

// GGUF metadata value types, numbered as in the format.
enum class GgufValueType : std::uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

struct GgufArray;
using GgufValue = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t,
                               std::uint32_t, std::int32_t, float, bool, std::string,
                               std::shared_ptr<GgufArray>, std::uint64_t, std::int64_t, double>;
struct GgufArray {
    GgufValueType elementType = GgufValueType::U8;
    std::vector<GgufValue> values;
};

struct GgufTensorInfo {
    std::string name;
    std::vector<std::uint64_t> shape; // ne[0] first (contiguous)
    TensorType type = TensorType::F32;
    std::uint64_t offset = 0;     // relative to the data section
    std::uint64_t infoOffset = 0; // where this tensor's info starts in the file
};

struct GgufLimits {
    std::uint64_t maxStringBytes = 64ull << 20;
    std::uint64_t maxArrayElements = 16ull << 20;
    std::uint64_t maxMetadataEntries = 1ull << 16;
    std::uint64_t maxTensors = 1ull << 16;
};

class GgufFile {
public:
    static GgufFile open(const std::filesystem::path& path, const GgufLimits& limits = {});

    std::uint32_t version() const { return version_; }
    std::uint64_t alignment() const { return alignment_; }
    std::uint64_t dataOffset() const { return dataOffset_; }
    const std::filesystem::path& path() const { return path_; }

    const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
    const GgufValue* find(const std::string& key) const;
    // Where the key-value entry of `key` starts in the file (for error messages).
    std::optional<std::uint64_t> metadataOffset(const std::string& key) const;
    // Typed look-ups: nullopt when absent; ModelError when present with another type.
    // Integer getters accept any integer type whose value fits.
    std::optional<std::string> getString(const std::string& key) const;
    std::optional<std::uint64_t> getUInt(const std::string& key) const;
    std::optional<double> getFloat(const std::string& key) const; // any numeric type
    std::optional<bool> getBool(const std::string& key) const;
    std::optional<std::vector<std::string>> getStringArray(const std::string& key) const;
    std::optional<std::vector<double>> getNumberArray(const std::string& key) const;

    const std::vector<GgufTensorInfo>& tensorInfos() const { return tensors_; }
    std::span<const std::uint8_t> tensorData(const GgufTensorInfo& info) const;
    std::shared_ptr<const MappedFile> mapping() const { return file_; }

private:
    std::filesystem::path path_;
    std::shared_ptr<const MappedFile> file_;
    std::uint32_t version_ = 0;
    std::uint64_t alignment_ = 32;
    std::uint64_t dataOffset_ = 0;
    std::map<std::string, GgufValue> metadata_;
    std::map<std::string, std::uint64_t> metadataOffsets_;
    std::vector<GgufTensorInfo> tensors_;
};

} // namespace inferscope::models
