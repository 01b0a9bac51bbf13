#include "app/cli/Arguments.hpp"
#include "app/cli/Commands.hpp"
#include "app/cli/Output.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/synthetic/SyntheticShapes.hpp"

#include <cctype>
#include <filesystem>

namespace inferscope::cli {

namespace {

std::string presetNames() {
    std::string names;
    for (auto preset : models::allQuantPresets())
        names += (names.empty() ? "" : ", ") + std::string(models::quantPresetName(preset));
    return names;
}

std::string lowercase(std::string text) {
    for (auto& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return text;
}

// --type: one tensor type for every matrix ("q4_1"), or a llama.cpp preset whose name is no
// type ("q4_k_m"): the types its quantizer gives each matrix. --mix: any preset, also those
// named like a type ("q4_0": the head in Q6_K or Q8_0, as llama-quantize writes it).
void applyTypeOption(models::SyntheticModelSpec& spec, const std::string& type,
                     const std::string& mix) {
    if (!mix.empty()) {
        const auto preset = models::parseQuantPreset(mix);
        if (!preset)
            throw UsageError("synthesize: --mix must be a llama.cpp preset, not '" + mix + "' (" +
                             presetNames() + ")");
        spec.typeMix = preset;
        return;
    }
    const std::string given = lowercase(type);
    for (auto t : models::supportedTensorTypes())
        if (lowercase(std::string(models::tensorTypeName(t))) == given) {
            spec.weightType = t;
            return;
        }
    if (const auto preset = models::parseQuantPreset(given)) {
        spec.typeMix = preset;
        return;
    }
    throw UsageError("synthesize: --type must be a tensor type (f32, f16, bf16, q8_0, q4_0, q4_1, "
                     "q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs) or a preset (" +
                     presetNames() + "), not '" + type + "'");
}

} // namespace

// A model of a real model's shape with random weights and a working tokenizer: what the
// engine costs at that size (bytes, binding limits, tokens/s) without any download.
static int runSynthesize(const CommandArgs& args, std::ostream& out) {
    Arguments a(args, {{"--type", "--mix", "--layers", "--seed"}, {"--json", "--safetensors"}, {}});
    std::string known;
    for (const auto& shape : models::syntheticShapes())
        known += (known.empty() ? "" : ", ") + shape.name;
    const std::string usage =
        "usage: synthesize SHAPE OUT.gguf [--type TYPE|PRESET] [--mix PRESET] [--layers N] "
        "[--seed S] [--safetensors: OUT is a folder]\n  TYPE: every matrix in one tensor type "
        "(f16, q8_0, q4_1, ...); PRESET: llama.cpp's type mix (q4_k_m, q5_k_m, q3_k_m, ...)\n"
        "shapes: " +
        known;
    if (a.positionals().size() != 2) throw UsageError(usage);
    auto spec = models::syntheticShape(a.positionals()[0], models::TensorType::F16);
    if (!spec)
        throw UsageError("synthesize: unknown shape '" + a.positionals()[0] + "' (known: " + known +
                         ")\n" + usage);
    applyTypeOption(*spec, a.valueOr("--type", "f16"), a.valueOr("--mix", ""));
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
              spec->typeMix ? "mix " + std::string(models::quantPresetName(*spec->typeMix))
                            : std::string(models::tensorTypeName(spec->weightType)),
              std::int64_t(spec->layers), std::int64_t(bytes)});
    printTables(out, {t}, a.flag("--json"));
    return 0;
}

extern const CliCommand synthesizeCommand{
    "synthesize",
    "  synthesize SHAPE OUT.gguf [--type f16|q8_0|q4_1|q4_k_m|...] [--mix PRESET]\n"
    "                                   [--layers N] [--seed S] [--safetensors]\n"
    "                                   a GGUF of that model's shape (qwen2.5-0.5b,\n"
    "                                   qwen3-0.6b, gemma-3-270m, tiny-qwen3, tiny-gemma3,\n"
    "                                   tiny-phi3, tiny-smollm3), random weights and a BPE\n"
    "                                   tokenizer padded to its vocabulary; a preset\n"
    "                                   (q4_k_m) writes llama.cpp's type mix; --safetensors\n"
    "                                   writes an HF folder instead\n",
    runSynthesize};

} // namespace inferscope::cli
