#pragma once
// Typed reads of config.json fields: each names the file and the field when the value is
// absent or of the wrong kind (shared by HfConfig.cpp and HfArchitectureTraits.cpp).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace inferscope::models::hfjson {

using Json = nlohmann::json;

// Null counts as absent.
const Json* findField(const Json& object, const char* key);
std::uint32_t unsignedField(const Json& value, const std::string& source, const char* key);
std::uint32_t requiredUnsigned(const Json& object, const std::string& source, const char* key);
std::optional<std::uint32_t> optionalUnsigned(const Json& object, const std::string& source,
                                              const char* key);
std::optional<double> optionalNumber(const Json& object, const std::string& source,
                                     const std::string& key);
double requiredNumber(const Json& object, const std::string& source, const std::string& key);
std::optional<bool> optionalBool(const Json& object, const std::string& source, const char* key);

} // namespace inferscope::models::hfjson
