#include "models/formats/SafetensorsWriter.hpp"

#include "models/ModelError.hpp"
#include "models/formats/SafetensorsFile.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <fstream>

namespace inferscope::models {

std::vector<std::uint8_t> encodeFloats(TensorType type, std::span<const float> values) {
    std::vector<std::uint8_t> bytes;
    switch (type) {
    case TensorType::F32:
        bytes.reserve(values.size() * 4);
        for (float value : values) {
            const auto bits = std::bit_cast<std::uint32_t>(value);
            for (int shift = 0; shift < 32; shift += 8)
                bytes.push_back(static_cast<std::uint8_t>(bits >> shift));
        }
        return bytes;
    case TensorType::F16:
    case TensorType::BF16:
        bytes.reserve(values.size() * 2);
        for (float value : values) {
            const std::uint16_t bits =
                type == TensorType::F16 ? floatToHalf(value) : floatToBf16(value);
            bytes.push_back(static_cast<std::uint8_t>(bits));
            bytes.push_back(static_cast<std::uint8_t>(bits >> 8));
        }
        return bytes;
    default:
        break;
    }
    throw ModelError("encodeFloats: " + std::string(tensorTypeName(type)) +
                     " is not a plain float type");
}

void SafetensorsWriter::setMetadata(const std::string& key, const std::string& value) {
    for (auto& [existing, text] : metadata_)
        if (existing == key) {
            text = value;
            return;
        }
    metadata_.emplace_back(key, value);
}

std::uint64_t SafetensorsWriter::checkedBytes(const std::string& name, TensorType type,
                                              const std::vector<std::uint64_t>& shape) const {
    safetensorsDtypeName(type); // throws for types safetensors cannot hold
    if (name.empty() || name == "__metadata__")
        throw ModelError("safetensors writer", name, std::nullopt, "invalid tensor name");
    if (std::any_of(tensors_.begin(), tensors_.end(),
                    [&](const Tensor& tensor) { return tensor.name == name; }))
        throw ModelError("safetensors writer", name, std::nullopt, "duplicate tensor name");
    std::uint64_t elements = 1;
    for (std::uint64_t dim : shape) elements *= dim;
    const auto expected = tensorBytes(type, elements);
    if (!expected)
        throw ModelError("safetensors writer", name, std::nullopt,
                         std::to_string(elements) + " elements of " +
                             std::string(tensorTypeName(type)) + " are not whole bytes");
    return *expected;
}

void SafetensorsWriter::addTensor(const std::string& name, TensorType type,
                                  std::vector<std::uint64_t> shape,
                                  std::vector<std::uint8_t> data) {
    const std::uint64_t expected = checkedBytes(name, type, shape);
    if (expected != data.size())
        throw ModelError("safetensors writer", name, std::nullopt,
                         "got " + std::to_string(data.size()) + " bytes, expected " +
                             std::to_string(expected) + " of " + std::string(tensorTypeName(type)));
    tensors_.push_back({name, type, std::move(shape), std::move(data), {}, expected});
}

void SafetensorsWriter::addFloatTensor(const std::string& name, TensorType type,
                                       std::vector<std::uint64_t> shape,
                                       std::span<const float> values) {
    addTensor(name, type, std::move(shape), encodeFloats(type, values));
}

void SafetensorsWriter::addTensorLater(const std::string& name, TensorType type,
                                       std::vector<std::uint64_t> shape, TensorProducer produce) {
    const std::uint64_t expected = checkedBytes(name, type, shape);
    tensors_.push_back({name, type, std::move(shape), {}, std::move(produce), expected});
}

std::string SafetensorsWriter::headerText() const {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata_.empty()) {
        nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
        for (const auto& [key, value] : metadata_) metadata[key] = value;
        header["__metadata__"] = std::move(metadata);
    }
    std::uint64_t offset = 0;
    for (const auto& tensor : tensors_) {
        header[tensor.name] = {{"dtype", safetensorsDtypeName(tensor.type)},
                               {"shape", tensor.shape},
                               {"data_offsets", {offset, offset + tensor.bytes}}};
        offset += tensor.bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string out;
    const std::uint64_t headerSize = text.size();
    for (int shift = 0; shift < 64; shift += 8)
        out.push_back(static_cast<char>(static_cast<std::uint8_t>(headerSize >> shift)));
    return out + text;
}

std::vector<std::uint8_t> SafetensorsWriter::dataOf(const Tensor& tensor) const {
    if (!tensor.produce) return tensor.data;
    auto data = tensor.produce();
    if (data.size() != tensor.bytes)
        throw ModelError("safetensors writer", tensor.name, std::nullopt,
                         "produced " + std::to_string(data.size()) + " bytes, expected " +
                             std::to_string(tensor.bytes));
    return data;
}

std::vector<std::uint8_t> SafetensorsWriter::bytes() const {
    const std::string header = headerText();
    std::vector<std::uint8_t> out(header.begin(), header.end());
    for (const auto& tensor : tensors_) {
        const auto data = dataOf(tensor);
        out.insert(out.end(), data.begin(), data.end());
    }
    return out;
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
    std::ofstream stream(path, std::ios::binary | std::ios::trunc);
    if (!stream) throw ModelError(path.string(), "", std::nullopt, "cannot create file");
    const std::string header = headerText();
    stream.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const auto& tensor : tensors_) { // one tensor's bytes at a time
        const auto data = dataOf(tensor);
        stream.write(reinterpret_cast<const char*>(data.data()),
                     static_cast<std::streamsize>(data.size()));
    }
    if (!stream) throw ModelError(path.string(), "", std::nullopt, "cannot write file");
}

} // namespace inferscope::models
