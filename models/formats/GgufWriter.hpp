#pragma once
// Writes GGUF v3 files: used by the synthetic-model writer and by tests that build
// valid (and, via rawBytes(), deliberately broken) files.
#include "models/formats/GgufFile.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace inferscope::models {

class GgufWriter {
public:
    void setAlignment(std::uint64_t alignment) { alignment_ = alignment; }
    void set(const std::string& key, GgufValue value); // keeps insertion order
    void remove(const std::string& key);               // no-op when absent
    void setStringArray(const std::string& key, const std::vector<std::string>& values);
    void setF32Array(const std::string& key, const std::vector<float>& values);
    void setI32Array(const std::string& key, const std::vector<std::int32_t>& values);
    // data must hold tensorBytes(type, elements) bytes; shape in GGUF order.
    void addTensor(const std::string& name, TensorType type, std::vector<std::uint64_t> shape,
                   std::vector<std::uint8_t> data);
    void addF32Tensor(const std::string& name, std::vector<std::uint64_t> shape,
                      const std::vector<float>& values);
    // A tensor whose bytes `produce` makes when the file is written, one tensor at a time, so
    // a large model is written without holding every tensor at once (write() only).
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
        TensorProducer produce; // set for addTensorLater: data is made at write()
        std::uint64_t bytes = 0;
    };
    std::vector<std::uint8_t> header(std::vector<std::uint64_t>& offsets) const;
    std::uint64_t alignment_ = 32;
    std::vector<std::pair<std::string, GgufValue>> metadata_;
    std::vector<Tensor> tensors_;
};

} // namespace inferscope::models
