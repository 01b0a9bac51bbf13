#pragma once
// The data shipped in resources/ (the factual battery, the model presets) travels inside the
// binaries: the build embeds each file's bytes (cmake/EmbedResources.cmake), so a build folder
// anywhere and an installed copy need no source tree and no environment variable.
// INFERSCOPE_RESOURCES, when set, names a folder whose files are read instead (to try an
// edited battery without rebuilding).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::compute {

struct EmbeddedResource {
    std::string_view name; // "model-presets.json"
    std::string_view bytes;
};

// Every file of resources/ the build embedded (generated source).
const std::vector<EmbeddedResource>& embeddedResources();

struct ShippedResource {
    std::string bytes;
    std::string source; // the file read, or "resources/NAME (built in)"
};

// $INFERSCOPE_RESOURCES/fileName when the variable is set (read with the small-file cap;
// a missing or unreadable file there is an error, not a silent fall-back), else the embedded
// copy; nullopt when neither has it.
std::optional<ShippedResource> shippedResource(std::string_view fileName);

} // namespace inferscope::compute
