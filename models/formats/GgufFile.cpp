#include "models/formats/GgufFile.hpp"

#include "models/ModelError.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>

namespace inferscope::models {

namespace {

constexpr std::uint64_t headerBytes = 4 + 4 + 8 + 8; // magic, version, tensor and kv counts
constexpr std::uint32_t maxDims = 4;                 // GGML_MAX_DIMS
constexpr std::uint64_t maxTensorNameBytes = 64;     // the GGUF spec's limit
constexpr std::uint64_t maxKeyBytes = 65535;         // the GGUF spec's limit
constexpr int maxArrayNesting = 4;
constexpr std::uint64_t maxAlignment = 1ull << 30;

std::string valueTypeName(GgufValueType type) {
    switch (type) {
    case GgufValueType::U8:
        return "u8";
    case GgufValueType::I8:
        return "i8";
    case GgufValueType::U16:
        return "u16";
    case GgufValueType::I16:
        return "i16";
    case GgufValueType::U32:
        return "u32";
    case GgufValueType::I32:
        return "i32";
    case GgufValueType::F32:
        return "f32";
    case GgufValueType::Bool:
        return "bool";
    case GgufValueType::String:
        return "string";
    case GgufValueType::Array:
        return "array";
    case GgufValueType::U64:
        return "u64";
    case GgufValueType::I64:
        return "i64";
    case GgufValueType::F64:
        return "f64";
    }
    return "type " + std::to_string(static_cast<std::uint32_t>(type));
}

bool knownValueType(std::uint32_t raw) {
    return raw <= static_cast<std::uint32_t>(GgufValueType::F64);
}

// The fewest bytes one value of the type can take in the file: used to refuse counts the
// remaining bytes cannot possibly hold before allocating anything for them.
std::uint64_t minimumValueBytes(GgufValueType type) {
    switch (type) {
    case GgufValueType::U8:
    case GgufValueType::I8:
    case GgufValueType::Bool:
        return 1;
    case GgufValueType::U16:
    case GgufValueType::I16:
        return 2;
    case GgufValueType::U32:
    case GgufValueType::I32:
    case GgufValueType::F32:
        return 4;
    case GgufValueType::String:
    case GgufValueType::U64:
    case GgufValueType::I64:
    case GgufValueType::F64:
        return 8;
    case GgufValueType::Array:
        return 12;
    }
    return 1;
}

// Sequential little-endian reads from the mapping; every read is bounds-checked and
// failures name the field and the offset where it starts.
class Reader {
public:
    Reader(std::span<const std::uint8_t> bytes, std::string file, const GgufLimits& limits)
        : bytes_(bytes), file_(std::move(file)), limits_(limits) {}

    std::uint64_t position() const { return position_; }
    void seek(std::uint64_t position) { position_ = position; }
    std::uint64_t remaining() const { return bytes_.size() - position_; }
    const std::string& file() const { return file_; }

    [[noreturn]] void fail(const std::string& field, std::uint64_t offset,
                           const std::string& message) const {
        throw ModelError(file_, field, offset, message);
    }

    void need(std::uint64_t count, const std::string& field) const {
        if (count > remaining())
            fail(field, position_,
                 "file truncated: needs " + std::to_string(count) + " bytes, only " +
                     std::to_string(remaining()) + " left of " + std::to_string(bytes_.size()));
    }

    template <typename T> T read(const std::string& field) {
        need(sizeof(T), field);
        T value;
        std::memcpy(&value, bytes_.data() + position_, sizeof(T));
        position_ += sizeof(T);
        return value;
    }

    std::string readString(const std::string& field, std::uint64_t maxBytes) {
        const std::uint64_t start = position_;
        const auto length = read<std::uint64_t>(field + " length");
        if (length > maxBytes)
            fail(field, start,
                 "string length " + std::to_string(length) + " exceeds the limit of " +
                     std::to_string(maxBytes) + " bytes");
        need(length, field);
        std::string text(reinterpret_cast<const char*>(bytes_.data() + position_), length);
        position_ += length;
        return text;
    }

    GgufValue readValue(GgufValueType type, const std::string& field, int depth) {
        switch (type) {
        case GgufValueType::U8:
            return read<std::uint8_t>(field);
        case GgufValueType::I8:
            return read<std::int8_t>(field);
        case GgufValueType::U16:
            return read<std::uint16_t>(field);
        case GgufValueType::I16:
            return read<std::int16_t>(field);
        case GgufValueType::U32:
            return read<std::uint32_t>(field);
        case GgufValueType::I32:
            return read<std::int32_t>(field);
        case GgufValueType::F32:
            return read<float>(field);
        case GgufValueType::U64:
            return read<std::uint64_t>(field);
        case GgufValueType::I64:
            return read<std::int64_t>(field);
        case GgufValueType::F64:
            return read<double>(field);
        case GgufValueType::Bool: {
            const std::uint64_t start = position_;
            const auto raw = read<std::uint8_t>(field);
            if (raw > 1) fail(field, start, "bool value " + std::to_string(raw) + " is not 0 or 1");
            return raw == 1;
        }
        case GgufValueType::String:
            return readString(field, limits_.maxStringBytes);
        case GgufValueType::Array:
            return readArray(field, depth);
        }
        fail(field, position_, "unknown value type");
    }

private:
    GgufValue readArray(const std::string& field, int depth) {
        const std::uint64_t start = position_;
        if (depth >= maxArrayNesting)
            fail(field, start,
                 "arrays nested deeper than " + std::to_string(maxArrayNesting) + " levels");
        const auto rawType = read<std::uint32_t>(field + " element type");
        if (!knownValueType(rawType))
            fail(field, start, "unknown array element type " + std::to_string(rawType));
        const auto elementType = static_cast<GgufValueType>(rawType);
        const std::uint64_t countOffset = position_;
        const auto count = read<std::uint64_t>(field + " array length");
        if (count > limits_.maxArrayElements)
            fail(field, countOffset,
                 "array length " + std::to_string(count) + " exceeds the limit of " +
                     std::to_string(limits_.maxArrayElements));
        if (count > remaining() / minimumValueBytes(elementType))
            fail(field, countOffset,
                 "array length " + std::to_string(count) + " of " + valueTypeName(elementType) +
                     " cannot fit in the " + std::to_string(remaining()) +
                     " bytes left (file truncated?)");
        auto array = std::make_shared<GgufArray>();
        array->elementType = elementType;
        array->values.reserve(count);
        for (std::uint64_t i = 0; i < count; ++i)
            array->values.push_back(
                readValue(elementType, field + "[" + std::to_string(i) + "]", depth + 1));
        return array;
    }

    std::span<const std::uint8_t> bytes_;
    std::string file_;
    const GgufLimits& limits_;
    std::uint64_t position_ = 0;
};

GgufValueType typeOf(const GgufValue& value) {
    // The variant's alternatives are declared in the format's numbering.
    return static_cast<GgufValueType>(value.index());
}

std::optional<std::uint64_t> asUnsigned(const GgufValue& value, bool& negative) {
    negative = false;
    return std::visit(
        [&](const auto& v) -> std::optional<std::uint64_t> {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
                return std::nullopt;
            } else if constexpr (std::is_integral_v<T>) {
                if constexpr (std::is_signed_v<T>) {
                    if (v < 0) {
                        negative = true;
                        return std::nullopt;
                    }
                }
                return static_cast<std::uint64_t>(v);
            } else {
                return std::nullopt;
            }
        },
        value);
}

std::optional<double> asNumber(const GgufValue& value) {
    return std::visit(
        [](const auto& v) -> std::optional<double> {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
                return std::nullopt;
            } else if constexpr (std::is_arithmetic_v<T>) {
                return static_cast<double>(v);
            } else {
                return std::nullopt;
            }
        },
        value);
}

bool checkedMultiply(std::uint64_t a, std::uint64_t b, std::uint64_t& result) {
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
    result = a * b;
    return true;
}

} // namespace

GgufFile GgufFile::open(const std::filesystem::path& path, const GgufLimits& limits) {
    GgufFile gguf;
    gguf.path_ = path;
    gguf.file_ = std::make_shared<const MappedFile>(path);
    const std::span<const std::uint8_t> bytes = gguf.file_->bytes();
    Reader reader(bytes, path.string(), limits);

    // Header.
    reader.need(4, "magic");
    if (std::memcmp(bytes.data(), "GGUF", 4) != 0) reader.fail("magic", 0, "not a GGUF file");
    reader.seek(4);
    gguf.version_ = reader.read<std::uint32_t>("version");
    if (gguf.version_ != 2 && gguf.version_ != 3) {
        std::string message = "GGUF version " + std::to_string(gguf.version_) +
                              " is not supported (this reader reads versions 2 and 3)";
        if (gguf.version_ == 1) message += "; version 1 files predate 64-bit counts: re-convert";
        if (gguf.version_ == 0x02000000u || gguf.version_ == 0x03000000u)
            message += "; this looks like a big-endian file";
        reader.fail("version", 4, message);
    }
    const std::uint64_t tensorCountOffset = reader.position();
    const auto tensorCount = reader.read<std::uint64_t>("tensor_count");
    const std::uint64_t metadataCountOffset = reader.position();
    const auto metadataCount = reader.read<std::uint64_t>("metadata_kv_count");
    if (tensorCount > limits.maxTensors)
        reader.fail("tensor_count", tensorCountOffset,
                    std::to_string(tensorCount) + " tensors exceed the limit of " +
                        std::to_string(limits.maxTensors));
    if (metadataCount > limits.maxMetadataEntries)
        reader.fail("metadata_kv_count", metadataCountOffset,
                    std::to_string(metadataCount) + " entries exceed the limit of " +
                        std::to_string(limits.maxMetadataEntries));

    // Metadata.
    for (std::uint64_t i = 0; i < metadataCount; ++i) {
        const std::uint64_t entryOffset = reader.position();
        const std::string entryField = "metadata[" + std::to_string(i) + "]";
        std::string key = reader.readString(entryField + " key", maxKeyBytes);
        if (key.empty()) reader.fail(entryField + " key", entryOffset, "empty metadata key");
        if (gguf.metadata_.contains(key))
            reader.fail(key, entryOffset,
                        "duplicate metadata key (first at byte " +
                            std::to_string(gguf.metadataOffsets_[key]) + ")");
        const std::uint64_t typeOffset = reader.position();
        const auto rawType = reader.read<std::uint32_t>(key + " value type");
        if (!knownValueType(rawType))
            reader.fail(key, typeOffset, "unknown metadata value type " + std::to_string(rawType));
        GgufValue value = reader.readValue(static_cast<GgufValueType>(rawType), key, 0);
        gguf.metadataOffsets_.emplace(key, entryOffset);
        gguf.metadata_.emplace(std::move(key), std::move(value));
    }

    if (gguf.find("general.alignment")) {
        const std::uint64_t alignmentOffset = *gguf.metadataOffset("general.alignment");
        const std::uint64_t alignment = *gguf.getUInt("general.alignment");
        if (alignment == 0 || !std::has_single_bit(alignment) || alignment > maxAlignment)
            reader.fail("general.alignment", alignmentOffset,
                        "alignment " + std::to_string(alignment) + " is not a power of two up to " +
                            std::to_string(maxAlignment));
        gguf.alignment_ = alignment;
    }

    // Tensor infos.
    // Smallest tensor info: empty name (8) + n_dims (4) + one dim (8) + type (4) + offset (8);
    // a count the rest of the file cannot hold fails below, at the first missing byte.
    gguf.tensors_.reserve(std::min<std::uint64_t>(tensorCount, reader.remaining() / 32));
    std::map<std::string, std::uint64_t> seenNames;
    for (std::uint64_t i = 0; i < tensorCount; ++i) {
        GgufTensorInfo info;
        info.infoOffset = reader.position();
        const std::string infoField = "tensor_infos[" + std::to_string(i) + "]";
        info.name = reader.readString(infoField + " name", maxTensorNameBytes);
        if (info.name.empty())
            reader.fail(infoField + " name", info.infoOffset, "empty tensor name");
        if (auto seen = seenNames.find(info.name); seen != seenNames.end())
            reader.fail(info.name, info.infoOffset,
                        "duplicate tensor name (first at byte " + std::to_string(seen->second) +
                            ")");
        seenNames.emplace(info.name, info.infoOffset);

        const std::uint64_t dimsOffset = reader.position();
        const auto dims = reader.read<std::uint32_t>(info.name + " n_dims");
        if (dims == 0 || dims > maxDims)
            reader.fail(info.name + " n_dims", dimsOffset,
                        "n_dims " + std::to_string(dims) + " is not in 1.." +
                            std::to_string(maxDims));
        std::uint64_t elements = 1;
        for (std::uint32_t d = 0; d < dims; ++d) {
            const std::uint64_t dimOffset = reader.position();
            const std::string dimField = info.name + " ne[" + std::to_string(d) + "]";
            const auto extent = reader.read<std::uint64_t>(dimField);
            if (extent == 0) reader.fail(dimField, dimOffset, "zero dimension");
            if (!checkedMultiply(elements, extent, elements) ||
                elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                reader.fail(dimField, dimOffset, "element count overflows");
            info.shape.push_back(extent);
        }

        const std::uint64_t typeOffset = reader.position();
        const auto rawType = reader.read<std::uint32_t>(info.name + " type");
        const auto traits = tensorTypeTraits(rawType);
        if (!traits)
            reader.fail(info.name + " type", typeOffset,
                        "unsupported tensor type " + describeTensorType(rawType));
        info.type = static_cast<TensorType>(rawType);
        if (info.shape[0] % traits->blockElements != 0)
            reader.fail(info.name + " ne[0]", dimsOffset + 4,
                        "row length " + std::to_string(info.shape[0]) +
                            " is not a multiple of the " + std::string(traits->name) +
                            " block size " + std::to_string(traits->blockElements));
        if (!tensorBytes(info.type, elements))
            reader.fail(info.name + " type", typeOffset, "tensor byte size overflows");

        const std::uint64_t offsetOffset = reader.position();
        info.offset = reader.read<std::uint64_t>(info.name + " offset");
        if (info.offset % gguf.alignment_ != 0)
            reader.fail(info.name + " offset", offsetOffset,
                        "data offset " + std::to_string(info.offset) +
                            " is not aligned to general.alignment " +
                            std::to_string(gguf.alignment_));
        gguf.tensors_.push_back(std::move(info));
    }

    // Tensor data: starts at the next multiple of the alignment.
    const std::uint64_t infosEnd = reader.position();
    const std::uint64_t padding = (gguf.alignment_ - infosEnd % gguf.alignment_) % gguf.alignment_;
    gguf.dataOffset_ = infosEnd + padding; // both far below 2^64: infosEnd <= file size
    if (!gguf.tensors_.empty() && gguf.dataOffset_ > bytes.size())
        reader.fail("tensor data", infosEnd,
                    "file truncated before the tensor data section (starts at byte " +
                        std::to_string(gguf.dataOffset_) + ", file has " +
                        std::to_string(bytes.size()) + " bytes)");

    std::vector<std::pair<std::uint64_t, std::uint64_t>> extents; // [begin, end) per tensor
    extents.reserve(gguf.tensors_.size());
    for (const GgufTensorInfo& info : gguf.tensors_) {
        std::uint64_t elements = 1;
        for (std::uint64_t extent : info.shape) elements *= extent; // checked above
        const std::uint64_t size = *tensorBytes(info.type, elements);
        const std::uint64_t available =
            bytes.size() - std::min<std::uint64_t>(gguf.dataOffset_, bytes.size());
        if (info.offset > available || size > available - info.offset)
            reader.fail(info.name + " offset", info.infoOffset,
                        std::to_string(size) + " bytes of data at data offset " +
                            std::to_string(info.offset) + " lie beyond the end of the file (" +
                            std::to_string(available) + " bytes of tensor data)");
        extents.emplace_back(info.offset, info.offset + size);
    }
    std::vector<std::size_t> order(extents.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return extents[a] < extents[b]; });
    for (std::size_t k = 1; k < order.size(); ++k) {
        const auto& previous = extents[order[k - 1]];
        const auto& current = extents[order[k]];
        if (current.first < previous.second) {
            const GgufTensorInfo& info = gguf.tensors_[order[k]];
            reader.fail(info.name + " offset", info.infoOffset,
                        "data overlaps tensor '" + gguf.tensors_[order[k - 1]].name + "'");
        }
    }
    return gguf;
}

const GgufValue* GgufFile::find(const std::string& key) const {
    auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

std::optional<std::uint64_t> GgufFile::metadataOffset(const std::string& key) const {
    auto it = metadataOffsets_.find(key);
    if (it == metadataOffsets_.end()) return std::nullopt;
    return it->second;
}

namespace {
[[noreturn]] void wrongType(const GgufFile& file, const std::string& key, const std::string& wanted,
                            const GgufValue& found) {
    std::string foundName = valueTypeName(typeOf(found));
    if (const auto* array = std::get_if<std::shared_ptr<GgufArray>>(&found); array && *array)
        foundName = "array of " + valueTypeName((*array)->elementType);
    throw ModelError(file.path().string(), key, file.metadataOffset(key),
                     "expected " + wanted + ", found " + foundName);
}
} // namespace

std::optional<std::string> GgufFile::getString(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    if (const auto* text = std::get_if<std::string>(value)) return *text;
    wrongType(*this, key, "string", *value);
}

std::optional<std::uint64_t> GgufFile::getUInt(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    bool negative = false;
    if (auto number = asUnsigned(*value, negative)) return number;
    if (negative)
        throw ModelError(path_.string(), key, metadataOffset(key), "negative value not allowed");
    wrongType(*this, key, "an integer", *value);
}

std::optional<double> GgufFile::getFloat(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    if (auto number = asNumber(*value)) return number;
    wrongType(*this, key, "a number", *value);
}

std::optional<bool> GgufFile::getBool(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    if (const auto* flag = std::get_if<bool>(value)) return *flag;
    wrongType(*this, key, "bool", *value);
}

std::optional<std::vector<std::string>> GgufFile::getStringArray(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    const auto* array = std::get_if<std::shared_ptr<GgufArray>>(value);
    if (!array || !*array || (*array)->elementType != GgufValueType::String)
        wrongType(*this, key, "array of string", *value);
    std::vector<std::string> texts;
    texts.reserve((*array)->values.size());
    for (const GgufValue& element : (*array)->values)
        texts.push_back(std::get<std::string>(element));
    return texts;
}

std::optional<std::vector<double>> GgufFile::getNumberArray(const std::string& key) const {
    const GgufValue* value = find(key);
    if (!value) return std::nullopt;
    const auto* array = std::get_if<std::shared_ptr<GgufArray>>(value);
    const auto elementType = array && *array ? (*array)->elementType : GgufValueType::String;
    if (elementType == GgufValueType::String || elementType == GgufValueType::Array ||
        elementType == GgufValueType::Bool)
        wrongType(*this, key, "array of numbers", *value);
    std::vector<double> numbers;
    numbers.reserve((*array)->values.size());
    for (const GgufValue& element : (*array)->values) numbers.push_back(*asNumber(element));
    return numbers;
}

std::span<const std::uint8_t> GgufFile::tensorData(const GgufTensorInfo& info) const {
    std::uint64_t elements = 1;
    for (std::uint64_t extent : info.shape) elements *= extent;
    const auto size = tensorBytes(info.type, elements);
    const auto bytes = file_->bytes();
    // Infos from this file were checked at open; refuse anything else rather than read wild.
    if (info.shape.empty() || !size || dataOffset_ > bytes.size() ||
        info.offset > bytes.size() - dataOffset_ ||
        *size > bytes.size() - dataOffset_ - info.offset)
        throw ModelError(path_.string(), info.name, info.infoOffset,
                         "tensor data lies outside the file");
    return bytes.subspan(dataOffset_ + info.offset, *size);
}

} // namespace inferscope::models
