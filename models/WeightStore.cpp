#include "models/WeightStore.hpp"

#include "models/ModelError.hpp"

#include <string>

namespace inferscope::models {

std::uint64_t StoredTensor::elements() const {
    if (shape.empty()) return 0;
    std::uint64_t count = 1;
    for (std::uint64_t dim : shape) count *= dim; // readers check this product for overflow
    return count;
}

std::uint64_t StoredTensor::rows() const {
    if (shape.empty()) return 0;
    std::uint64_t count = 1;
    for (std::size_t i = 1; i < shape.size(); ++i) count *= shape[i];
    return count;
}

void WeightStore::add(StoredTensor tensor) {
    if (tensors_.contains(tensor.name))
        throw ModelError("duplicate tensor name '" + tensor.name + "'");
    std::string name = tensor.name;
    tensors_.emplace(std::move(name), std::move(tensor));
}

void WeightStore::remove(const std::string& name) {
    tensors_.erase(name);
}

bool WeightStore::contains(const std::string& name) const {
    return tensors_.contains(name);
}

const StoredTensor& WeightStore::at(const std::string& name) const {
    const StoredTensor* tensor = find(name);
    if (!tensor) throw ModelError("tensor '" + name + "' not found");
    return *tensor;
}

const StoredTensor* WeightStore::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<float> WeightStore::dequantized(const std::string& name) const {
    const StoredTensor& tensor = at(name);
    const std::uint64_t count = tensor.elements();
    const auto bytes = tensorBytes(tensor.type, count);
    if (!bytes || *bytes != tensor.data.size())
        throw ModelError("tensor '" + name + "' at byte " + std::to_string(tensor.fileOffset) +
                         " holds " + std::to_string(tensor.data.size()) + " bytes, " +
                         std::to_string(count) + " elements of " +
                         std::string(tensorTypeName(tensor.type)) + " need " +
                         (bytes ? std::to_string(*bytes) : std::string("whole blocks")));
    std::vector<float> values(count);
    dequantize(tensor.type, tensor.data, values);
    return values;
}

void WeightStore::addMapping(std::shared_ptr<const MappedFile> mapping) {
    mappings_.push_back(std::move(mapping));
}

void WeightStore::releaseResidentPages() const {
    for (const auto& mapping : mappings_) mapping->releaseResidentPages();
}

void WeightStore::releaseResidentPages(const std::string& name) const {
    const auto* tensor = find(name);
    if (!tensor) return;
    // Only a mapping's pages: advising away pages of heap memory would zero them.
    for (const auto& mapping : mappings_)
        if (mapping->releaseResidentPages(tensor->data)) return;
}

std::uint64_t WeightStore::totalElements() const {
    std::uint64_t total = 0;
    for (const auto& [name, tensor] : tensors_) total += tensor.elements();
    return total;
}

std::map<TensorType, std::uint64_t> WeightStore::bytesByType() const {
    std::map<TensorType, std::uint64_t> bytes;
    for (const auto& [name, tensor] : tensors_) bytes[tensor.type] += tensor.data.size();
    return bytes;
}

} // namespace inferscope::models
