// safetensors on arbitrary bytes, twice: the file reader alone (refused with a ModelError,
// or every tensor's data view lies inside the file and dequantizes), then as the weights of
// a model folder whose config.json and tokenizer.json are valid (a small synthetic model),
// so the name mapping and shape checks see inputs that get past the header.
#include "FuzzInput.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/SafetensorsFile.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <vector>

using namespace inferscope::models;

namespace {
std::filesystem::path modelFolder() {
    static const std::filesystem::path folder = [] {
        auto dir = inferscope::fuzz::scratchFolder() / "model";
        writeSyntheticSafetensors(inferscope::fuzz::seedModelSpec(), dir);
        return dir;
    }();
    return folder;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto folder = modelFolder();
    const auto file = folder / "model.safetensors";
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        const SafetensorsFile tensors = SafetensorsFile::open(file);
        for (const auto& tensor : tensors.tensors()) {
            const auto bytes = tensors.tensorData(tensor);
            std::uint64_t elements = 1;
            for (auto extent : tensor.shape) elements *= extent;
            if (elements > (1u << 20)) continue; // keep each run fast; bounds are still checked
            std::vector<float> values(elements);
            dequantize(tensor.type, bytes, values);
        }
    } catch (const ModelError&) {
        return 0;
    }
    try {
        const LoadedModel model = loadSafetensorsModel(folder);
        for (const auto& [name, tensor] : model.weights.tensors())
            (void)model.weights.dequantized(name);
    } catch (const ModelError&) {
    }
    return 0;
}
