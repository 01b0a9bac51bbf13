#include "compute/ResourcePaths.hpp"

#include <cstdlib>
#include <vector>

namespace inferscope::compute {

std::optional<std::filesystem::path> findResource(std::string_view fileName) {
    std::vector<std::filesystem::path> folders;
    if (const char* dir = std::getenv("INFERSCOPE_RESOURCES")) folders.emplace_back(dir);
    folders.emplace_back("resources");
    std::error_code error;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) {
        // build/app/<exe> and build/tests/<layer>/<exe>: the source tree is above the build.
        auto dir = exe.parent_path();
        for (int up = 0; up < 3 && dir.has_parent_path(); ++up) {
            dir = dir.parent_path();
            folders.push_back(dir / "resources");
        }
    }
    for (const auto& folder : folders)
        if (std::filesystem::exists(folder / fileName, error)) return folder / fileName;
    return std::nullopt;
}

} // namespace inferscope::compute
