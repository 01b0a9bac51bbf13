// GGUF reader and model loader on arbitrary bytes: every input is either refused with a
// ModelError or loads into a model whose tensors dequantize and whose tokenizer works.
// Any other exception, a crash or a sanitizer report is a bug.
#include "FuzzInput.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <vector>

using namespace inferscope::models;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = inferscope::fuzz::writeScratch("input.gguf", data, size);
    try {
        (void)GgufFile::open(file);
    } catch (const ModelError&) {
        return 0;
    }
    try {
        const LoadedModel model = loadGgufModel(file);
        for (const auto& [name, tensor] : model.weights.tensors()) {
            std::vector<float> values = model.weights.dequantized(name);
            (void)values;
        }
        const Tokenizer tokenizer(model.tokenizer);
        const auto ids = tokenizer.encode("Hello, wörld 123 <|im_start|>", true, true);
        (void)tokenizer.decode(ids);
    } catch (const ModelError&) {
    }
    return 0;
}
