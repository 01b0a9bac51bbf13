#include "models/formats/SafetensorsFile.hpp"

#include "models/ModelError.hpp"
#include "models/formats/StrictJson.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string_view>

namespace inferscope::models {

namespace {

constexpr std::string_view indexFileName = "model.safetensors.index.json";
constexpr std::string_view singleFileName = "model.safetensors";
constexpr std::size_t maxShards = 100000;

std::uint64_t readLittleEndian64(const std::uint8_t* bytes) {
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
    return value;
}

std::optional<TensorType> dtypeFromName(std::string_view name) {
    if (name == "F32") return TensorType::F32;
    if (name == "F16") return TensorType::F16;
    if (name == "BF16") return TensorType::BF16;
    return std::nullopt;
}

// Dtypes the format defines that this reader does not load (to tell "unsupported" from
// "not a dtype at all" in the error).
bool isKnownUnsupportedDtype(std::string_view name) {
    static constexpr std::array<std::string_view, 14> known{
        "F64", "I64", "U64",  "I32",     "U32",     "I16",     "U16",
        "I8",  "U8",  "BOOL", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4"};
    return std::find(known.begin(), known.end(), name) != known.end();
}

std::string quoted(const std::string& name) {
    return "'" + name + "'";
}

} // namespace

std::uint64_t SafetensorsTensor::elements() const {
    std::uint64_t count = 1;
    for (std::uint64_t dim : shape) count *= dim; // checked for overflow when read
    return count;
}

std::string safetensorsDtypeName(TensorType type) {
    switch (type) {
    case TensorType::F32:
        return "F32";
    case TensorType::F16:
        return "F16";
    case TensorType::BF16:
        return "BF16";
    default:
        break;
    }
    throw ModelError("safetensors cannot store tensors of type " +
                     std::string(tensorTypeName(type)));
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path,
                                      const SafetensorsLimits& limits) {
    SafetensorsFile result;
    result.path_ = path;
    result.file_ = std::make_shared<const MappedFile>(path);
    const std::string file = path.string();
    const auto bytes = result.file_->bytes();
    const std::uint64_t fileSize = bytes.size();

    if (fileSize < 8)
        throw ModelError(file, "header size", 0,
                         "file of " + std::to_string(fileSize) +
                             " bytes is too short to hold the 8-byte header size");
    const std::uint64_t headerBytes = readLittleEndian64(bytes.data());
    if (headerBytes > limits.maxHeaderBytes)
        throw ModelError(file, "header size", 0,
                         "header of " + std::to_string(headerBytes) +
                             " bytes exceeds the limit of " +
                             std::to_string(limits.maxHeaderBytes));
    if (headerBytes > fileSize - 8)
        throw ModelError(file, "header size", 0,
                         "header of " + std::to_string(headerBytes) +
                             " bytes runs past the end of the " + std::to_string(fileSize) +
                             "-byte file (truncated?)");
    if (headerBytes < 2 || bytes[8] != '{')
        throw ModelError(file, "header", 8, "header must be a JSON object starting with '{'");
    result.headerBytes_ = headerBytes;
    const std::string_view headerText(reinterpret_cast<const char*>(bytes.data() + 8), headerBytes);
    const nlohmann::json header =
        parseStrictJson(headerText, file, {.baseOffset = 8, .field = "header"});
    if (!header.is_object()) throw ModelError(file, "header", 8, "header must be a JSON object");
    if (header.size() > limits.maxTensors + 1)
        throw ModelError(file, "header", 8,
                         std::to_string(header.size()) + " entries exceed the limit of " +
                             std::to_string(limits.maxTensors) + " tensors");

    // Points errors about one entry at its name in the header.
    auto entryOffset = [&](const std::string& name) -> std::uint64_t {
        const std::size_t at = headerText.find(nlohmann::json(name).dump());
        return 8 + (at == std::string_view::npos ? 0 : at);
    };
    const std::uint64_t dataOffset = 8 + headerBytes;
    const std::uint64_t dataBytes = fileSize - dataOffset;

    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object())
                throw ModelError(file, "__metadata__", entryOffset(name),
                                 "must be an object of strings");
            for (const auto& [key, value] : entry.items()) {
                if (!value.is_string())
                    throw ModelError(file, "__metadata__." + key, entryOffset(key),
                                     "metadata values must be strings");
                result.metadata_[key] = value.get<std::string>();
            }
            continue;
        }
        const std::string field = "tensor " + quoted(name);
        const std::uint64_t at = entryOffset(name);
        if (name.empty()) throw ModelError(file, field, at, "empty tensor name");
        if (!entry.is_object())
            throw ModelError(file, field, at,
                             "entry must be an object with dtype, shape and data_offsets");

        SafetensorsTensor tensor;
        tensor.name = name;
        const auto dtype = entry.find("dtype");
        if (dtype == entry.end() || !dtype->is_string())
            throw ModelError(file, field + ".dtype", at, "missing or not a string");
        const std::string dtypeName = dtype->get<std::string>();
        const auto type = dtypeFromName(dtypeName);
        if (!type)
            throw ModelError(file, field + ".dtype", at,
                             isKnownUnsupportedDtype(dtypeName)
                                 ? "dtype " + dtypeName +
                                       " is not supported (supported: F32, F16, BF16)"
                                 : "unknown dtype \"" + dtypeName + "\"");
        tensor.type = *type;

        const auto shape = entry.find("shape");
        if (shape == entry.end() || !shape->is_array())
            throw ModelError(file, field + ".shape", at, "missing or not an array");
        if (shape->size() > limits.maxDims)
            throw ModelError(file, field + ".shape", at,
                             std::to_string(shape->size()) + " dimensions exceed the limit of " +
                                 std::to_string(limits.maxDims));
        const std::uint64_t elementBytes = tensorTypeTraits(tensor.type).blockBytes;
        std::uint64_t byteCount = elementBytes;
        for (const auto& dim : *shape) {
            if (!dim.is_number_unsigned())
                throw ModelError(file, field + ".shape", at,
                                 "dimensions must be non-negative integers, got " + dim.dump());
            const std::uint64_t size = dim.get<std::uint64_t>();
            if (size != 0 && byteCount > std::numeric_limits<std::uint64_t>::max() / size)
                throw ModelError(file, field + ".shape", at,
                                 "shape " + shape->dump() + " overflows 64 bits");
            byteCount *= size;
            tensor.shape.push_back(size);
        }

        const auto offsets = entry.find("data_offsets");
        if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
            !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
            throw ModelError(file, field + ".data_offsets", at,
                             "must be an array of two non-negative integers [begin, end]");
        tensor.begin = (*offsets)[0].get<std::uint64_t>();
        tensor.end = (*offsets)[1].get<std::uint64_t>();
        if (tensor.end < tensor.begin)
            throw ModelError(file, field + ".data_offsets", at,
                             "end " + std::to_string(tensor.end) + " is before begin " +
                                 std::to_string(tensor.begin));
        if (tensor.end > dataBytes)
            throw ModelError(file, field + ".data_offsets", at,
                             "range [" + std::to_string(tensor.begin) + ", " +
                                 std::to_string(tensor.end) + ") runs past the " +
                                 std::to_string(dataBytes) + "-byte data section");
        if (tensor.end - tensor.begin != byteCount)
            throw ModelError(file, field + ".data_offsets", at,
                             "holds " + std::to_string(tensor.end - tensor.begin) +
                                 " bytes but shape " + shape->dump() + " of " + dtypeName +
                                 " needs " + std::to_string(byteCount));
        tensor.fileOffset = dataOffset + tensor.begin;
        result.tensors_.push_back(std::move(tensor));
    }

    // The ranges must tile the data section: sorted by begin, each starts where the last
    // one ended. Overlaps would let one tensor's bytes alias another's; holes and trailing
    // bytes hide data no tensor accounts for.
    std::sort(result.tensors_.begin(), result.tensors_.end(),
              [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
                  return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
              });
    std::uint64_t expectedBegin = 0;
    const SafetensorsTensor* previous = nullptr;
    for (const auto& tensor : result.tensors_) {
        const std::string field = "tensor " + quoted(tensor.name) + ".data_offsets";
        if (tensor.begin < expectedBegin)
            throw ModelError(file, field, tensor.fileOffset,
                             "overlaps tensor " + quoted(previous->name) + " (which ends at " +
                                 std::to_string(expectedBegin) + ")");
        if (tensor.begin > expectedBegin)
            throw ModelError(file, field, dataOffset + expectedBegin,
                             "leaves a hole of " + std::to_string(tensor.begin - expectedBegin) +
                                 " bytes before it");
        expectedBegin = tensor.end;
        previous = &tensor;
    }
    if (expectedBegin != dataBytes)
        throw ModelError(file, "data", dataOffset + expectedBegin,
                         std::to_string(dataBytes - expectedBegin) +
                             " bytes after the last tensor belong to no tensor");
    for (std::size_t i = 0; i < result.tensors_.size(); ++i)
        result.byName_.emplace(result.tensors_[i].name, i);
    return result;
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
    auto it = byName_.find(name);
    return it == byName_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::uint8_t> SafetensorsFile::tensorData(const SafetensorsTensor& tensor) const {
    return file_->bytes().subspan(dataOffset() + tensor.begin, tensor.end - tensor.begin);
}

SafetensorsCheckpoint SafetensorsCheckpoint::openFolder(const std::filesystem::path& folder,
                                                        const SafetensorsLimits& limits) {
    const auto index = folder / indexFileName;
    if (std::filesystem::exists(index)) return openIndex(index, limits);
    const auto single = folder / singleFileName;
    if (std::filesystem::exists(single)) return openSingle(single, limits);
    throw ModelError(folder.string(), "", std::nullopt,
                     "holds neither model.safetensors nor model.safetensors.index.json");
}

SafetensorsCheckpoint SafetensorsCheckpoint::openSingle(const std::filesystem::path& file,
                                                        const SafetensorsLimits& limits) {
    SafetensorsCheckpoint checkpoint;
    auto shard = std::make_shared<const SafetensorsFile>(SafetensorsFile::open(file, limits));
    for (const auto& tensor : shard->tensors())
        checkpoint.tensors_.emplace(tensor.name, Entry{shard.get(), &tensor});
    checkpoint.totalBytes_ = shard->fileBytes();
    checkpoint.files_.push_back(std::move(shard));
    return checkpoint;
}

SafetensorsCheckpoint SafetensorsCheckpoint::openIndex(const std::filesystem::path& indexFile,
                                                       const SafetensorsLimits& limits) {
    const std::string file = indexFile.string();
    const nlohmann::json index = readStrictJsonFile(indexFile);
    if (!index.is_object()) throw ModelError(file, "", std::nullopt, "index must be a JSON object");
    const auto weightMap = index.find("weight_map");
    if (weightMap == index.end() || !weightMap->is_object())
        throw ModelError(file, "weight_map", std::nullopt, "missing or not an object");

    std::map<std::string, std::string> shardOf; // tensor -> shard file name
    std::set<std::string> shardNames;
    for (const auto& [name, value] : weightMap->items()) {
        const std::string field = "weight_map." + name;
        if (!value.is_string())
            throw ModelError(file, field, std::nullopt, "shard file name must be a string");
        const std::string shard = value.get<std::string>();
        // Shards live beside the index; anything that could name another place is refused.
        if (shard.empty() || shard.find('/') != std::string::npos ||
            shard.find('\\') != std::string::npos || shard.find("..") != std::string::npos ||
            shard.find('\0') != std::string::npos)
            throw ModelError(file, field, std::nullopt,
                             "shard name \"" + shard +
                                 "\" must be a plain file name in the index's folder");
        shardOf.emplace(name, shard);
        shardNames.insert(shard);
        if (shardNames.size() > maxShards)
            throw ModelError(file, "weight_map", std::nullopt, "too many shard files");
    }
    if (shardNames.empty()) throw ModelError(file, "weight_map", std::nullopt, "names no tensors");

    SafetensorsCheckpoint checkpoint;
    std::error_code error;
    checkpoint.totalBytes_ = std::filesystem::file_size(indexFile, error);
    const auto folder = indexFile.parent_path();
    std::map<std::string, std::string> foundIn; // tensor -> shard that holds it
    for (const auto& shardName : shardNames) {
        auto shard = std::make_shared<const SafetensorsFile>(
            SafetensorsFile::open(folder / shardName, limits));
        for (const auto& tensor : shard->tensors()) {
            auto [it, inserted] = foundIn.emplace(tensor.name, shardName);
            if (!inserted)
                throw ModelError(shard->path().string(), "tensor " + quoted(tensor.name),
                                 tensor.fileOffset,
                                 "is also stored in shard " + it->second +
                                     "; a tensor must live in exactly one shard");
            const auto listed = shardOf.find(tensor.name);
            if (listed == shardOf.end())
                throw ModelError(shard->path().string(), "tensor " + quoted(tensor.name),
                                 tensor.fileOffset, "is not listed in the index's weight_map");
            if (listed->second != shardName)
                throw ModelError(shard->path().string(), "tensor " + quoted(tensor.name),
                                 tensor.fileOffset,
                                 "the index places it in shard " + listed->second);
            checkpoint.tensors_.emplace(tensor.name, Entry{shard.get(), &tensor});
        }
        checkpoint.totalBytes_ += shard->fileBytes();
        checkpoint.files_.push_back(std::move(shard));
    }
    for (const auto& [name, shard] : shardOf)
        if (!checkpoint.tensors_.contains(name))
            throw ModelError(file, "weight_map." + name, std::nullopt,
                             "tensor is missing from shard " + shard);
    return checkpoint;
}

const SafetensorsCheckpoint::Entry* SafetensorsCheckpoint::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

} // namespace inferscope::models
