// Writes the generated part of the fuzz seed corpus: small synthetic models as GGUF (each
// weight type) and as safetensors folders, whose config.json and tokenizer.json seed the
// JSON target (with its selector byte first), and texts for the tokenizer target.
//   make_seeds OUTPUT_FOLDER   (creates gguf/, safetensors/, hf_json/, tokenizer/ in it)
#include "FuzzInput.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

using namespace inferscope::models;

namespace {

std::string readAll(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds OUTPUT_FOLDER\n");
        return 2;
    }
    const std::filesystem::path out = argv[1];
    for (const char* sub : {"gguf", "safetensors", "hf_json", "tokenizer"})
        std::filesystem::create_directories(out / sub);

    SyntheticModelSpec spec = inferscope::fuzz::seedModelSpec();
    const std::pair<TensorType, const char*> types[] = {
        {TensorType::F32, "f32"},   {TensorType::F16, "f16"},   {TensorType::BF16, "bf16"},
        {TensorType::Q8_0, "q8_0"}, {TensorType::Q4_0, "q4_0"}, {TensorType::Q4_1, "q4_1"}};
    for (const auto& [type, name] : types) {
        spec.weightType = type;
        spec.hiddenSize =
            type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16
                ? 16
                : 32; // block formats need rows of 32
        spec.headDim = spec.hiddenSize / spec.heads;
        spec.ffnSize = 32;
        writeSyntheticGguf(spec, out / "gguf" / (std::string("synthetic-") + name + ".gguf"));
    }
    spec = inferscope::fuzz::seedModelSpec();
    spec.architecture = "qwen2";
    spec.qkvBias = true;
    writeSyntheticGguf(spec, out / "gguf" / "synthetic-qwen2.gguf");

    for (const char* architecture : {"llama", "qwen2"}) {
        spec = inferscope::fuzz::seedModelSpec();
        spec.architecture = architecture;
        spec.qkvBias = std::string(architecture) == "qwen2";
        const auto folder = out / ("folder-" + std::string(architecture));
        writeSyntheticSafetensors(spec, folder);
        std::filesystem::copy_file(folder / "model.safetensors",
                                   out / "safetensors" /
                                       (std::string(architecture) + ".safetensors"),
                                   std::filesystem::copy_options::overwrite_existing);
        // The JSON target's first byte: 0 config.json, 1 tokenizer.json, 2 with a config.
        writeAll(out / "hf_json" / ("config-" + std::string(architecture) + ".json"),
                 std::string(1, '\0') + readAll(folder / "config.json"));
        writeAll(out / "hf_json" / ("tokenizer-" + std::string(architecture) + ".json"),
                 std::string(1, '\1') + readAll(folder / "tokenizer.json"));
        writeAll(out / "hf_json" / ("tokenizer-config-" + std::string(architecture) + ".json"),
                 std::string(1, '\2') + readAll(folder / "tokenizer.json"));
        std::filesystem::remove_all(folder);
    }

    // The tokenizer target's first byte picks one of 6 tokenizers and, above 6, special
    // token parsing.
    const char* texts[] = {"Hello world",
                           "Grüße aus Köln 🍺",
                           "  leading spaces\n\n\ttabs",
                           "12345 3.14159 1,000,000",
                           "<|im_start|>user\nHi<|im_end|>",
                           "don't won't I'm",
                           "\xff\xfe invalid \xc3",
                           "中文 日本語 한국어"};
    int index = 0;
    for (const char* text : texts)
        for (char selector = 0; selector < 12; selector += 5)
            writeAll(out / "tokenizer" / ("text-" + std::to_string(index++)),
                     std::string(1, selector) + text);
    return 0;
}
