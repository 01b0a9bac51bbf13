#include "models/formats/GgufWriter.hpp"

#include "models/ModelError.hpp"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace inferscope::models {

namespace {

class ByteSink {
public:
    explicit ByteSink(std::vector<std::uint8_t>& out) : out_(out) {}

    template <typename T> void put(T value) {
        std::uint8_t raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T)); // little-endian hosts only, as GGUF is
        out_.insert(out_.end(), raw, raw + sizeof(T));
    }
    void putString(const std::string& text) {
        put<std::uint64_t>(text.size());
        out_.insert(out_.end(), text.begin(), text.end());
    }
    void padTo(std::uint64_t alignment) {
        while (out_.size() % alignment != 0) out_.push_back(0);
    }

    void putValue(const GgufValue& value) {
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, std::string>) {
                    putString(v);
                } else if constexpr (std::is_same_v<T, std::shared_ptr<GgufArray>>) {
                    if (!v) throw std::invalid_argument("GgufWriter: null array value");
                    put<std::uint32_t>(static_cast<std::uint32_t>(v->elementType));
                    put<std::uint64_t>(v->values.size());
                    for (const GgufValue& element : v->values) {
                        if (static_cast<GgufValueType>(element.index()) != v->elementType)
                            throw std::invalid_argument(
                                "GgufWriter: array element of another type than the array's");
                        putValue(element);
                    }
                } else if constexpr (std::is_same_v<T, bool>) {
                    put<std::uint8_t>(v ? 1 : 0);
                } else {
                    put<T>(v);
                }
            },
            value);
    }

private:
    std::vector<std::uint8_t>& out_;
};

template <typename T>
std::shared_ptr<GgufArray> makeArray(GgufValueType type, const std::vector<T>& values) {
    auto array = std::make_shared<GgufArray>();
    array->elementType = type;
    array->values.reserve(values.size());
    for (const T& value : values) array->values.emplace_back(value);
    return array;
}

} // namespace

void GgufWriter::set(const std::string& key, GgufValue value) {
    for (auto& [existing, stored] : metadata_) {
        if (existing == key) {
            stored = std::move(value);
            return;
        }
    }
    metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::remove(const std::string& key) {
    std::erase_if(metadata_, [&](const auto& entry) { return entry.first == key; });
}

void GgufWriter::setStringArray(const std::string& key, const std::vector<std::string>& values) {
    set(key, makeArray(GgufValueType::String, values));
}

void GgufWriter::setF32Array(const std::string& key, const std::vector<float>& values) {
    set(key, makeArray(GgufValueType::F32, values));
}

void GgufWriter::setI32Array(const std::string& key, const std::vector<std::int32_t>& values) {
    set(key, makeArray(GgufValueType::I32, values));
}

namespace {

std::uint64_t checkedTensorBytes(const std::string& name, TensorType type,
                                 const std::vector<std::uint64_t>& shape) {
    if (shape.empty() || shape.size() > 4)
        throw std::invalid_argument("GgufWriter: tensor '" + name + "' needs 1 to 4 dimensions");
    std::uint64_t elements = 1;
    for (std::uint64_t extent : shape) elements *= extent;
    const auto bytes = tensorBytes(type, elements);
    if (!bytes)
        throw std::invalid_argument("GgufWriter: tensor '" + name +
                                    "' is not whole blocks of its type");
    return *bytes;
}

} // namespace

void GgufWriter::addTensor(const std::string& name, TensorType type,
                           std::vector<std::uint64_t> shape, std::vector<std::uint8_t> data) {
    const std::uint64_t bytes = checkedTensorBytes(name, type, shape);
    if (bytes != data.size())
        throw std::invalid_argument("GgufWriter: tensor '" + name + "' has " +
                                    std::to_string(data.size()) +
                                    " bytes, not what its type and shape need");
    for (const Tensor& tensor : tensors_)
        if (tensor.name == name)
            throw std::invalid_argument("GgufWriter: duplicate tensor '" + name + "'");
    tensors_.push_back({name, type, std::move(shape), std::move(data), {}, bytes});
}

void GgufWriter::addTensorLater(const std::string& name, TensorType type,
                                std::vector<std::uint64_t> shape, TensorProducer produce) {
    const std::uint64_t bytes = checkedTensorBytes(name, type, shape);
    for (const Tensor& tensor : tensors_)
        if (tensor.name == name)
            throw std::invalid_argument("GgufWriter: duplicate tensor '" + name + "'");
    tensors_.push_back({name, type, std::move(shape), {}, std::move(produce), bytes});
}

void GgufWriter::addF32Tensor(const std::string& name, std::vector<std::uint64_t> shape,
                              const std::vector<float>& values) {
    std::vector<std::uint8_t> data(values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(data.data(), values.data(), data.size());
    addTensor(name, TensorType::F32, std::move(shape), std::move(data));
}

std::vector<std::uint8_t> GgufWriter::header(std::vector<std::uint64_t>& offsets) const {
    if (alignment_ == 0) throw std::invalid_argument("GgufWriter: alignment must not be zero");
    // A non-default alignment must be announced, or readers assume 32; an explicit
    // general.alignment set by the caller wins (tests use it to write inconsistent files).
    bool hasAlignmentKey = false;
    for (const auto& entry : metadata_) hasAlignmentKey |= entry.first == "general.alignment";
    const bool addAlignmentKey = !hasAlignmentKey && alignment_ != 32;

    std::vector<std::uint8_t> out{'G', 'G', 'U', 'F'};
    ByteSink sink(out);
    sink.put<std::uint32_t>(3);
    sink.put<std::uint64_t>(tensors_.size());
    sink.put<std::uint64_t>(metadata_.size() + (addAlignmentKey ? 1 : 0));
    if (addAlignmentKey) {
        sink.putString("general.alignment");
        sink.put<std::uint32_t>(static_cast<std::uint32_t>(GgufValueType::U32));
        sink.put<std::uint32_t>(static_cast<std::uint32_t>(alignment_));
    }
    for (const auto& [key, value] : metadata_) {
        sink.putString(key);
        sink.put<std::uint32_t>(static_cast<std::uint32_t>(value.index()));
        sink.putValue(value);
    }

    std::uint64_t dataSize = 0;
    offsets.clear();
    for (const Tensor& tensor : tensors_) {
        dataSize += (alignment_ - dataSize % alignment_) % alignment_;
        offsets.push_back(dataSize);
        dataSize += tensor.bytes;
    }
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const Tensor& tensor = tensors_[i];
        sink.putString(tensor.name);
        sink.put<std::uint32_t>(static_cast<std::uint32_t>(tensor.shape.size()));
        for (std::uint64_t extent : tensor.shape) sink.put<std::uint64_t>(extent);
        sink.put<std::uint32_t>(static_cast<std::uint32_t>(tensor.type));
        sink.put<std::uint64_t>(offsets[i]);
    }
    sink.padTo(alignment_);
    return out;
}

std::vector<std::uint8_t> GgufWriter::bytes() const {
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint8_t> out = header(offsets);
    const std::uint64_t dataStart = out.size();
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        out.resize(dataStart + offsets[i], 0);
        const Tensor& tensor = tensors_[i];
        const std::vector<std::uint8_t> made =
            tensor.produce ? tensor.produce() : std::vector<std::uint8_t>{};
        const std::vector<std::uint8_t>& data = tensor.produce ? made : tensor.data;
        if (data.size() != tensor.bytes)
            throw std::invalid_argument("GgufWriter: tensor '" + tensor.name + "' made " +
                                        std::to_string(data.size()) + " bytes, not " +
                                        std::to_string(tensor.bytes));
        out.insert(out.end(), data.begin(), data.end());
    }
    return out;
}

void GgufWriter::write(const std::filesystem::path& path) const {
    std::vector<std::uint64_t> offsets;
    const std::vector<std::uint8_t> head = header(offsets);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) throw ModelError(path.string(), "", std::nullopt, "cannot create file");
    file.write(reinterpret_cast<const char*>(head.data()),
               static_cast<std::streamsize>(head.size()));
    // Tensor by tensor: a producer's bytes live only while they are written.
    std::uint64_t written = 0;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const std::vector<char> padding(offsets[i] - written, 0);
        file.write(padding.data(), static_cast<std::streamsize>(padding.size()));
        const Tensor& tensor = tensors_[i];
        const std::vector<std::uint8_t> made =
            tensor.produce ? tensor.produce() : std::vector<std::uint8_t>{};
        const std::vector<std::uint8_t>& data = tensor.produce ? made : tensor.data;
        if (data.size() != tensor.bytes)
            throw ModelError(path.string(), tensor.name, std::nullopt,
                             "tensor made " + std::to_string(data.size()) + " bytes, not " +
                                 std::to_string(tensor.bytes));
        file.write(reinterpret_cast<const char*>(data.data()),
                   static_cast<std::streamsize>(data.size()));
        written = offsets[i] + data.size();
    }
    file.close();
    if (!file) throw ModelError(path.string(), "", std::nullopt, "cannot write file");
}

} // namespace inferscope::models
