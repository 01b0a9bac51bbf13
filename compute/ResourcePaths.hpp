#pragma once
// Where the files shipped in resources/ are at run time: $INFERSCOPE_RESOURCES, ./resources,
// or the source tree beside the build folder that holds the running executable
// (build/app/inferscope, build/tests/<layer>/test_x). One search for the window and the CLI.
#include <filesystem>
#include <optional>
#include <string_view>

namespace inferscope::compute {

std::optional<std::filesystem::path> findResource(std::string_view fileName);

} // namespace inferscope::compute
