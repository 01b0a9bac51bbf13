#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/synthetic/SyntheticShapes.hpp"

#include <cctype>
#include <filesystem>

namespace inferscope::cli {

namespace {

models::TensorType synthesizedType(const std::string& name) {
    // The type names are upper case ("Q4_1"); the option takes either case.
    auto lowercase = [](std::string text) {
        for (auto& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        return text;
    };
    const std::string given = lowercase(name);
    for (auto type : {models::TensorType::F32, models::TensorType::F16, models::TensorType::Q8_0,
                      models::TensorType::Q4_0, models::TensorType::Q4_1})
        if (lowercase(std::string(models::tensorTypeName(type))) == given) return type;
    throw UsageError("synthesize: --type must be f32, f16, q8_0, q4_0 or q4_1, not '" + name + "'");
}

} // namespace

// A model of a real model's shape with random weights and a working tokenizer: what the
// engine costs at that size (bytes, binding limits, tokens/s) without any download.
static int runSynthesize(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{"--type", "--layers", "--seed"}, {"--json", "--safetensors"}, {}});
    std::string known;
    for (const auto& shape : models::syntheticShapes())
        known += (known.empty() ? "" : ", ") + shape.name;
    const std::string usage = "usage: synthesize SHAPE OUT.gguf [--type f16|q8_0|q4_1|q4_0|f32] "
                              "[--layers N] [--seed S] [--safetensors: OUT is a folder]\n"
                              "shapes: " +
                              known;
    if (a.positionals().size() != 2) throw UsageError(usage);
    auto spec =
        models::syntheticShape(a.positionals()[0], synthesizedType(a.valueOr("--type", "f16")));
    if (!spec)
        throw UsageError("synthesize: unknown shape '" + a.positionals()[0] + "' (known: " + known +
                         ")\n" + usage);
    spec->layers = std::uint32_t(a.integer("--layers", spec->layers, 1, 256));
    spec->seed = std::uint64_t(a.integer("--seed", std::int64_t(spec->seed), 0, 1ll << 40));
    const std::filesystem::path file = a.positionals()[1];
    const bool folder = a.flag("--safetensors");
    if (folder)
        models::writeSyntheticSafetensors(*spec, file);
    else
        models::writeSyntheticGguf(*spec, file);
    std::uint64_t bytes = 0;
    if (folder)
        for (const auto& entry : std::filesystem::directory_iterator(file))
            bytes += entry.is_regular_file() ? entry.file_size() : 0;
    else
        bytes = std::filesystem::file_size(file);

    compute::Table t;
    t.id = "synthesize";
    t.title = "Synthetic model written (random weights: its costs are real, its text is not)";
    t.addColumn("file").addColumn("shape").addColumn("type").addColumn("layers").addColumn("bytes",
                                                                                           "bytes");
    t.addRow({file.string(), a.positionals()[0],
              std::string(models::tensorTypeName(spec->weightType)), std::int64_t(spec->layers),
              std::int64_t(bytes)});
    printTables(out, {t}, a.flag("--json"));
    return 0;
}

extern const CliCommand synthesizeCommand{
    "synthesize",
    "  synthesize SHAPE OUT.gguf [--type f16|q8_0|q4_1] [--layers N] [--seed S]\n"
    "                                   a GGUF of that model's shape (qwen2.5-0.5b,\n"
    "                                   qwen3-0.6b, gemma-3-270m, tiny-qwen3, tiny-gemma3,\n"
    "                                   tiny-phi3, tiny-smollm3), random weights and a BPE\n"
    "                                   tokenizer padded to its vocabulary; --safetensors\n"
    "                                   writes an HF folder instead\n",
    runSynthesize};

} // namespace inferscope::cli
