#pragma once
// SPIR-V of every shaders/*.comp, compiled by glslc at build time and embedded here.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace inferscope::shaders {

struct EmbeddedShader {
    std::string_view name; // file stem, e.g. "rmsnorm"
    std::span<const std::uint32_t> spirv;
};

const std::vector<EmbeddedShader>& allShaders();

} // namespace inferscope::shaders
