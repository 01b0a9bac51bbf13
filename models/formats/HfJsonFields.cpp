#include "models/formats/HfJsonFields.hpp"

#include "models/ModelError.hpp"

#include <limits>

namespace inferscope::models::hfjson {

const Json* findField(const Json& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::uint32_t unsignedField(const Json& value, const std::string& source, const char* key) {
    if (!value.is_number_unsigned() ||
        value.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
        throw ModelError(source, key, std::nullopt,
                         "must be a non-negative 32-bit integer, got " + value.dump());
    return static_cast<std::uint32_t>(value.get<std::uint64_t>());
}

std::uint32_t requiredUnsigned(const Json& object, const std::string& source, const char* key) {
    const Json* value = findField(object, key);
    if (!value) throw ModelError(source, key, std::nullopt, "missing required field");
    return unsignedField(*value, source, key);
}

std::optional<std::uint32_t> optionalUnsigned(const Json& object, const std::string& source,
                                              const char* key) {
    const Json* value = findField(object, key);
    if (!value) return std::nullopt;
    return unsignedField(*value, source, key);
}

std::optional<double> optionalNumber(const Json& object, const std::string& source,
                                     const std::string& key) {
    const Json* value = findField(object, key.c_str());
    if (!value) return std::nullopt;
    if (!value->is_number())
        throw ModelError(source, key, std::nullopt, "must be a number, got " + value->dump());
    return value->get<double>();
}

double requiredNumber(const Json& object, const std::string& source, const std::string& key) {
    auto value = optionalNumber(object, source, key);
    if (!value) throw ModelError(source, key, std::nullopt, "missing required field");
    return *value;
}

std::optional<bool> optionalBool(const Json& object, const std::string& source, const char* key) {
    const Json* value = findField(object, key);
    if (!value) return std::nullopt;
    if (!value->is_boolean())
        throw ModelError(source, key, std::nullopt, "must be true or false, got " + value->dump());
    return value->get<bool>();
}

} // namespace inferscope::models::hfjson
