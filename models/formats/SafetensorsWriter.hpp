#pragma once
// Writes safetensors files (F32, F16, BF16): used by the synthetic-model writer and by
// tests that build valid files. The header's keys keep insertion order and it is padded
// with spaces to a multiple of 8 bytes, so tensor data starts aligned.
#include "models/formats/TensorType.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace inferscope::models {

// Little-endian bytes of values stored as F32, F16 or BF16 (rounded to nearest even).
std::vector<std::uint8_t> encodeFloats(TensorType type, std::span<const float> values);

class SafetensorsWriter {
public:
    void setMetadata(const std::string& key, const std::string& value);
    // shape as safetensors stores it (outermost first); data must hold exactly
    // shape x dtype bytes. Throws ModelError on a duplicate name or a wrong byte count.
    void addTensor(const std::string& name, TensorType type, std::vector<std::uint64_t> shape,
                   std::vector<std::uint8_t> data);
    // Converts values to type (F32, F16 or BF16).
    void addFloatTensor(const std::string& name, TensorType type, std::vector<std::uint64_t> shape,
                        std::span<const float> values);
    // A tensor whose bytes `produce` makes when the file is written, one tensor at a time, so
    // a large model is written without holding every tensor (write() streams them).
    using TensorProducer = std::function<std::vector<std::uint8_t>()>;
    void addTensorLater(const std::string& name, TensorType type, std::vector<std::uint64_t> shape,
                        TensorProducer produce);

    std::vector<std::uint8_t> bytes() const;
    void write(const std::filesystem::path& path) const;

private:
    struct Tensor {
        std::string name;
        TensorType type;
        std::vector<std::uint64_t> shape;
        std::vector<std::uint8_t> data;
        TensorProducer produce; // set by addTensorLater: data is made when written
        std::uint64_t bytes = 0;
    };
    // Checks the name and type; the byte count `elements` of `type` take.
    std::uint64_t checkedBytes(const std::string& name, TensorType type,
                               const std::vector<std::uint64_t>& shape) const;
    std::string headerText() const;
    std::vector<std::uint8_t> dataOf(const Tensor& tensor) const;
    std::vector<std::pair<std::string, std::string>> metadata_;
    std::vector<Tensor> tensors_;
};

} // namespace inferscope::models
