#include "compute/ResourcePaths.hpp"

#include "models/formats/TextFile.hpp"

#include <cstdlib>
#include <filesystem>

namespace inferscope::compute {

std::optional<ShippedResource> shippedResource(std::string_view fileName) {
    if (const char* dir = std::getenv("INFERSCOPE_RESOURCES"); dir && *dir) {
        const auto path = std::filesystem::path(dir) / fileName;
        try {
            return ShippedResource{models::readTextFile(path, models::kMaxSmallTextBytes),
                                   path.string()};
        } catch (const models::TextFileError& e) {
            throw models::TextFileError(path,
                                        e.reason() + " (INFERSCOPE_RESOURCES names the folder)");
        }
    }
    for (const auto& resource : embeddedResources())
        if (resource.name == fileName)
            return ShippedResource{std::string(resource.bytes),
                                   "resources/" + std::string(fileName) + " (built in)"};
    return std::nullopt;
}

} // namespace inferscope::compute
