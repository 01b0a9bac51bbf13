// Malformed and hostile GGUF files: each must be refused with a ModelError that names the
// offending field, and none may crash (run under ASan/UBSan to make "crash" strict). The
// files start from a small valid model (TinyGgufModel.hpp) and are corrupted byte by byte.
#include "TinyGgufModel.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/GgufFile.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

using namespace inferscope::models;
using Bytes = std::vector<std::uint8_t>;

namespace {

Bytes base() {
    return tiny::writer().bytes();
}
Bytes bytesOf(const tiny::Spec& spec) {
    return tiny::writer(spec).bytes();
}
Bytes with(const std::function<void(GgufWriter&)>& change) {
    GgufWriter writer = tiny::writer();
    change(writer);
    return writer.bytes();
}

// A file with one metadata entry of each kind (no tensors), for truncation inside values.
GgufWriter kindsWriter() {
    auto array = [](GgufValueType type, std::vector<GgufValue> values) {
        auto out = std::make_shared<GgufArray>();
        out->elementType = type;
        out->values = std::move(values);
        return out;
    };
    GgufWriter writer;
    writer.set("k.u8", std::uint8_t{1});
    writer.set("k.u16", std::uint16_t{2});
    writer.set("k.u32", std::uint32_t{3});
    writer.set("k.f32", 4.0f);
    writer.set("k.u64", std::uint64_t{5});
    writer.set("k.f64", 6.0);
    writer.set("k.bool", true);
    writer.set("k.string", std::string("a string value"));
    writer.setStringArray("k.strings", {"first", "second"});
    writer.set("k.nested", array(GgufValueType::Array,
                                 {array(GgufValueType::I64, {std::int64_t{7}, std::int64_t{8}})}));
    return writer;
}

struct Case {
    std::string name;
    std::function<Bytes()> build;
    std::vector<std::string> mentions; // the message must contain each
    bool fileOnly = false;             // GgufFile::open (not a model) instead of loadGgufModel
};

// Truncation inside the value of `key` in the kinds file, `into` bytes after the value starts.
Case truncatedValue(const std::string& key, std::size_t into) {
    return {"truncated inside " + key,
            [key, into] {
                Bytes bytes = kindsWriter().bytes();
                bytes.resize(tiny::metadataAt(bytes, key).valueAt + into);
                return bytes;
            },
            {key, "truncated"},
            true};
}

Case patchU64(std::string name, std::function<std::size_t(const Bytes&)> where, std::uint64_t value,
              std::vector<std::string> mentions) {
    return {std::move(name),
            [where, value] {
                Bytes bytes = base();
                tiny::put<std::uint64_t>(bytes, where(bytes), value);
                return bytes;
            },
            std::move(mentions)};
}

Case patchU32(std::string name, std::function<std::size_t(const Bytes&)> where, std::uint32_t value,
              std::vector<std::string> mentions) {
    return {std::move(name),
            [where, value] {
                Bytes bytes = base();
                tiny::put<std::uint32_t>(bytes, where(bytes), value);
                return bytes;
            },
            std::move(mentions)};
}

// Renames a string in place (same length), e.g. to make a key or tensor name vanish or repeat.
Bytes renamed(Bytes bytes, const std::string& from, const std::string& to) {
    const std::size_t at = tiny::findString(bytes, from) + 8;
    std::copy(to.begin(), to.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at));
    return bytes;
}

std::vector<Case> cases() {
    using tiny::metadataAt;
    using tiny::tensorInfoAt;
    std::vector<Case> all;
    // Header.
    all.push_back({"empty file", [] { return Bytes{}; }, {"magic"}});
    all.push_back({"bad magic",
                   [] {
                       Bytes b = base();
                       b[0] = 'X';
                       return b;
                   },
                   {"magic"}});
    all.push_back({"truncated in magic",
                   [] {
                       Bytes b = base();
                       b.resize(2);
                       return b;
                   },
                   {"magic"}});
    all.push_back({"truncated in version",
                   [] {
                       Bytes b = base();
                       b.resize(6);
                       return b;
                   },
                   {"version", "truncated"}});
    all.push_back({"truncated in tensor count",
                   [] {
                       Bytes b = base();
                       b.resize(10);
                       return b;
                   },
                   {"tensor_count", "truncated"}});
    all.push_back({"truncated in metadata count",
                   [] {
                       Bytes b = base();
                       b.resize(20);
                       return b;
                   },
                   {"metadata_kv_count", "truncated"}});
    all.push_back(
        patchU32("version 1", [](const Bytes&) { return 4; }, 1, {"version", "version 1"}));
    all.push_back(patchU32("version 99", [](const Bytes&) { return 4; }, 99, {"version", "99"}));
    all.push_back(patchU32("big-endian version", [](const Bytes&) { return 4; }, 0x03000000,
                           {"version", "big-endian"}));
    all.push_back(patchU64("huge metadata count", [](const Bytes&) { return 16; }, 1ull << 40,
                           {"metadata_kv_count", "limit"}));
    all.push_back(
        patchU64("metadata count beyond file", [](const Bytes&) { return 16; }, 60000, {}));
    all.push_back(patchU64("huge tensor count", [](const Bytes&) { return 8; }, 1ull << 40,
                           {"tensor_count", "limit"}));
    all.push_back(patchU64("tensor count beyond file", [](const Bytes&) { return 8; }, 60000,
                           {"tensor_infos[11]"}));

    // Metadata.
    all.push_back(patchU64("huge key length", [](const Bytes&) { return 24; }, 1ull << 62,
                           {"metadata[0] key", "limit"}));
    all.push_back(patchU64("key length beyond file", [](const Bytes&) { return 24; }, 60000,
                           {"metadata[0] key", "truncated"}));
    all.push_back(
        patchU64("empty key", [](const Bytes&) { return 24; }, 0, {"metadata[0] key", "empty"}));
    all.push_back(
        patchU64("huge string length",
                 [](const Bytes& b) { return metadataAt(b, "general.architecture").valueAt; },
                 1ull << 62, {"general.architecture", "limit"}));
    all.push_back(
        patchU64("string length beyond file",
                 [](const Bytes& b) { return metadataAt(b, "general.architecture").valueAt; },
                 100000, {"general.architecture", "truncated"}));
    all.push_back(
        patchU64("huge array length",
                 [](const Bytes& b) { return metadataAt(b, "tokenizer.ggml.tokens").valueAt + 4; },
                 1ull << 40, {"tokenizer.ggml.tokens", "limit"}));
    all.push_back(
        patchU64("array length beyond file",
                 [](const Bytes& b) { return metadataAt(b, "tokenizer.ggml.tokens").valueAt + 4; },
                 1000000, {"tokenizer.ggml.tokens", "cannot fit"}));
    all.push_back(
        patchU64("array element string length beyond file",
                 [](const Bytes& b) { return metadataAt(b, "tokenizer.ggml.tokens").valueAt + 12; },
                 100000, {"tokenizer.ggml.tokens[0]", "truncated"}));
    all.push_back(patchU32("unknown metadata value type",
                           [](const Bytes& b) { return metadataAt(b, "general.name").typeAt; }, 13,
                           {"general.name", "unknown metadata value type 13"}));
    all.push_back(
        patchU32("unknown array element type",
                 [](const Bytes& b) { return metadataAt(b, "tokenizer.ggml.tokens").valueAt; }, 99,
                 {"tokenizer.ggml.tokens", "element type"}));
    all.push_back({"bool neither 0 nor 1",
                   [] {
                       Bytes b = base();
                       b[metadataAt(b, "tokenizer.ggml.add_bos_token").valueAt] = 2;
                       return b;
                   },
                   {"tokenizer.ggml.add_bos_token", "bool"}});
    all.push_back({"duplicate metadata key",
                   [] {
                       GgufWriter w = tiny::writer();
                       w.set("general.dup1", std::uint32_t{1});
                       w.set("general.dup2", std::uint32_t{2});
                       return renamed(w.bytes(), "general.dup2", "general.dup1");
                   },
                   {"general.dup1", "duplicate"}});
    all.push_back({"arrays nested too deep",
                   [] {
                       auto inner = std::make_shared<GgufArray>();
                       inner->elementType = GgufValueType::U8;
                       GgufValue value = inner;
                       for (int depth = 0; depth < 5; ++depth) {
                           auto outer = std::make_shared<GgufArray>();
                           outer->elementType = GgufValueType::Array;
                           outer->values.push_back(value);
                           value = outer;
                       }
                       return with([&](GgufWriter& w) { w.set("test.deep", value); });
                   },
                   {"test.deep", "nested"}});
    all.push_back(truncatedValue("k.u8", 0));
    all.push_back(truncatedValue("k.u16", 1));
    all.push_back(truncatedValue("k.u32", 2));
    all.push_back(truncatedValue("k.f32", 3));
    all.push_back(truncatedValue("k.u64", 5));
    all.push_back(truncatedValue("k.f64", 7));
    all.push_back(truncatedValue("k.bool", 0));
    all.push_back(truncatedValue("k.string", 3));                   // inside the length
    all.push_back(truncatedValue("k.string", 8 + 5));               // inside the text
    all.push_back(truncatedValue("k.strings", 2));                  // inside the element type
    all.push_back(truncatedValue("k.strings", 4 + 6));              // inside the count
    all.push_back(truncatedValue("k.strings", 12 + 8 + 5 + 8 + 2)); // inside the second element
    all.push_back(truncatedValue("k.nested", 12 + 4 + 8 + 8 + 3));  // inside the inner i64s
    all.push_back({"truncated inside a key",
                   [] {
                       Bytes b = kindsWriter().bytes();
                       b.resize(metadataAt(b, "k.u16").keyLengthAt + 8 + 2);
                       return b;
                   },
                   {"metadata[1] key", "truncated"},
                   true});
    all.push_back({"truncated inside a value type",
                   [] {
                       Bytes b = kindsWriter().bytes();
                       b.resize(metadataAt(b, "k.u16").typeAt + 2);
                       return b;
                   },
                   {"k.u16 value type", "truncated"},
                   true});

    // Alignment.
    all.push_back({"alignment not a power of two",
                   [] { return with([](GgufWriter& w) { w.setAlignment(48); }); },
                   {"general.alignment", "power of two"}});
    all.push_back(
        {"alignment zero",
         [] { return with([](GgufWriter& w) { w.set("general.alignment", std::uint32_t{0}); }); },
         {"general.alignment"}});
    all.push_back(
        {"alignment huge",
         [] {
             return with([](GgufWriter& w) { w.set("general.alignment", std::uint64_t{1} << 63); });
         },
         {"general.alignment"}});
    all.push_back(
        {"alignment is a string",
         [] { return with([](GgufWriter& w) { w.set("general.alignment", std::string("32")); }); },
         {"general.alignment", "expected an integer"}});

    // Tensor infos.
    const std::string embd = "token_embd.weight";
    all.push_back(patchU32("n_dims 0",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).nDimsAt; }, 0,
                           {"token_embd.weight n_dims", "n_dims 0"}));
    all.push_back(patchU32("n_dims 5",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).nDimsAt; }, 5,
                           {"token_embd.weight n_dims", "n_dims 5"}));
    all.push_back(patchU64("zero dimension",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).dimsAt + 8; }, 0,
                           {"token_embd.weight ne[1]", "zero"}));
    all.push_back({"dimension product overflow",
                   [embd] {
                       Bytes b = base();
                       const auto at = tensorInfoAt(b, embd);
                       tiny::put<std::uint64_t>(b, at.dimsAt, 1ull << 33);
                       tiny::put<std::uint64_t>(b, at.dimsAt + 8, 1ull << 33);
                       return b;
                   },
                   {"token_embd.weight ne[1]", "overflow"}});
    all.push_back({"dimension near 2^64",
                   [embd] {
                       Bytes b = base();
                       tiny::put<std::uint64_t>(b, tensorInfoAt(b, embd).dimsAt, ~0ull);
                       return b;
                   },
                   {"token_embd.weight"}});
    all.push_back(patchU32("unknown tensor type",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).typeAt; }, 77,
                           {"token_embd.weight type", "GGUF type 77 (not a ggml type)"}));
    // A type ggml defines that no reader here reads: named, not a number alone.
    all.push_back(patchU32("unsupported tensor type IQ2_XXS",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).typeAt; }, 16,
                           {"token_embd.weight type", "unsupported tensor type IQ2_XXS"}));
    // Every block type: a row that is not whole blocks, and a last tensor of four blocks in a
    // file cut three blocks short.
    for (TensorType type : supportedTensorTypes()) {
        const auto traits = tensorTypeTraits(type);
        if (traits.blockElements == 1) continue;
        const std::string name = "extra." + std::string(traits.name);
        all.push_back({std::string(traits.name) + " row not whole blocks",
                       [name, type, traits] {
                           return with([&](GgufWriter& w) {
                               w.addTensor(name, type, {traits.blockElements / 2, 2},
                                           Bytes(traits.blockBytes));
                           });
                       },
                       {name + " ne[0]", std::string(traits.name) + " block size " +
                                             std::to_string(traits.blockElements)}});
        all.push_back({std::string(traits.name) + " data beyond the end",
                       [name, type, traits] {
                           Bytes b = with([&](GgufWriter& w) {
                               w.addTensor(name, type, {traits.blockElements, 4},
                                           Bytes(4 * traits.blockBytes));
                           });
                           b.resize(b.size() - 3 * traits.blockBytes);
                           return b;
                       },
                       {name + " offset", std::to_string(4 * traits.blockBytes) + " bytes"}});
    }
    all.push_back({"row not whole blocks",
                   [] {
                       return with([](GgufWriter& w) {
                           w.addTensor("extra.q8", TensorType::Q8_0, {16, 2}, Bytes(34));
                       });
                   },
                   {"extra.q8 ne[0]", "block"}});
    all.push_back(
        {"tensor name too long",
         [] {
             return with([](GgufWriter& w) { w.addF32Tensor(std::string(70, 'n'), {1}, {1.0f}); });
         },
         {"name", "limit"}});
    all.push_back({"duplicate tensor name",
                   [] {
                       GgufWriter w = tiny::writer();
                       w.addF32Tensor("extra.a", {4}, {1, 2, 3, 4});
                       w.addF32Tensor("extra.b", {4}, {1, 2, 3, 4});
                       return renamed(w.bytes(), "extra.b", "extra.a");
                   },
                   {"extra.a", "duplicate tensor"}});
    all.push_back({"misaligned tensor offset",
                   [] {
                       Bytes b = base();
                       const auto at = tensorInfoAt(b, "output_norm.weight").offsetAt;
                       tiny::put<std::uint64_t>(b, at, tiny::get<std::uint64_t>(b, at) + 4);
                       return b;
                   },
                   {"output_norm.weight offset", "aligned"}});
    all.push_back(
        patchU64("overlapping tensors",
                 [](const Bytes& b) { return tensorInfoAt(b, "output_norm.weight").offsetAt; }, 0,
                 {"overlaps"}));
    all.push_back(
        patchU64("tensor data beyond the file",
                 [](const Bytes& b) { return tensorInfoAt(b, "blk.0.ffn_down.weight").offsetAt; },
                 1ull << 40, {"blk.0.ffn_down.weight offset", "beyond"}));
    all.push_back(
        patchU64("tensor offset near 2^64",
                 [](const Bytes& b) { return tensorInfoAt(b, "blk.0.ffn_up.weight").offsetAt; },
                 ~0ull - 31, {"blk.0.ffn_up.weight offset", "beyond"}));
    all.push_back({"truncated inside tensor infos",
                   [] {
                       Bytes b = base();
                       b.resize(tensorInfoAt(b, "blk.0.attn_k.weight").offsetAt + 3);
                       return b;
                   },
                   {"blk.0.attn_k.weight offset", "truncated"}});
    all.push_back({"truncated inside a tensor name",
                   [] {
                       Bytes b = base();
                       b.resize(tensorInfoAt(b, "blk.0.attn_v.weight").lengthAt + 8 + 4);
                       return b;
                   },
                   {"name", "truncated"}});
    all.push_back({"truncated inside tensor data",
                   [] {
                       Bytes b = base();
                       b.resize(b.size() - 10);
                       return b;
                   },
                   {"blk.0.ffn_down.weight offset", "beyond"}});

    // Model meaning.
    all.push_back({"bos token id beyond vocabulary",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("tokenizer.ggml.bos_token_id", std::uint32_t{8});
                       });
                   },
                   {"tokenizer.ggml.bos_token_id", "vocabulary"}});
    all.push_back({"eos token id negative",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("tokenizer.ggml.eos_token_id", std::int32_t{-1});
                       });
                   },
                   {"tokenizer.ggml.eos_token_id", "negative"}});
    all.push_back({"unknown token id huge",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("tokenizer.ggml.unknown_token_id", std::uint64_t{1} << 40);
                       });
                   },
                   {"tokenizer.ggml.unknown_token_id"}});
    all.push_back({"token_type 0",
                   [] {
                       return with([](GgufWriter& w) {
                           w.setI32Array("tokenizer.ggml.token_type", {3, 1, 1, 0, 1, 1, 1, 1});
                       });
                   },
                   {"tokenizer.ggml.token_type", "token 3"}});
    all.push_back({"token_type 7",
                   [] {
                       return with([](GgufWriter& w) {
                           w.setI32Array("tokenizer.ggml.token_type", {3, 1, 1, 1, 1, 1, 1, 7});
                       });
                   },
                   {"tokenizer.ggml.token_type", "not 1..6"}});
    all.push_back(
        {"token_type count mismatch",
         [] {
             return with([](GgufWriter& w) { w.setI32Array("tokenizer.ggml.token_type", {3, 1}); });
         },
         {"tokenizer.ggml.token_type", "2 token types"}});
    all.push_back(
        {"scores count mismatch",
         [] { return with([](GgufWriter& w) { w.setF32Array("tokenizer.ggml.scores", {0.0f}); }); },
         {"tokenizer.ggml.scores"}});
    all.push_back(
        {"tokens not strings",
         [] { return with([](GgufWriter& w) {
                  w.setI32Array("tokenizer.ggml.tokens", {1, 2});
              }); },
         {"tokenizer.ggml.tokens", "array of string"}});
    all.push_back(
        {"empty vocabulary",
         [] { return with([](GgufWriter& w) { w.setStringArray("tokenizer.ggml.tokens", {}); }); },
         {"tokenizer.ggml.tokens", "empty"}});
    all.push_back(
        {"unsupported tokenizer model",
         [] {
             return with([](GgufWriter& w) { w.set("tokenizer.ggml.model", std::string("bert")); });
         },
         {"tokenizer.ggml.model", "bert"}});
    all.push_back({"unsupported architecture",
                   [] {
                       tiny::Spec spec;
                       spec.architecture = "gpt9";
                       return bytesOf(spec);
                   },
                   {"general.architecture", "gpt9", "llama, mistral, qwen2"}});
    all.push_back({"architecture not a string",
                   [] {
                       return with(
                           [](GgufWriter& w) { w.set("general.architecture", std::uint32_t{1}); });
                   },
                   {"general.architecture"}});
    all.push_back({"missing block_count",
                   [] { return renamed(base(), "llama.block_count", "llama.block_counX"); },
                   {"llama.block_count", "missing"}});
    all.push_back(
        {"block_count is a string",
         [] { return with([](GgufWriter& w) { w.set("llama.block_count", std::string("1")); }); },
         {"llama.block_count"}});
    all.push_back(
        {"block_count beyond 32 bits",
         [] {
             return with([](GgufWriter& w) { w.set("llama.block_count", std::uint64_t{1} << 40); });
         },
         {"llama.block_count", "32 bits"}});
    all.push_back(
        {"block_count absurd",
         [] {
             return with([](GgufWriter& w) { w.set("llama.block_count", std::uint32_t{100000}); });
         },
         {"layers", "limit"}});
    all.push_back({"zero heads",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.attention.head_count", std::uint32_t{0});
                           w.set("llama.attention.key_length", std::uint32_t{4});
                       });
                   },
                   {"heads", "zero"}});
    all.push_back({"kv heads do not divide heads",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.attention.head_count_kv", std::uint32_t{3});
                       });
                   },
                   {"kvHeads"}});
    all.push_back({"epsilon zero",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.attention.layer_norm_rms_epsilon", 0.0f);
                       });
                   },
                   {"rmsNormEps"}});
    all.push_back({"epsilon NaN",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.attention.layer_norm_rms_epsilon",
                                 std::numeric_limits<float>::quiet_NaN());
                       });
                   },
                   {"llama.attention.layer_norm_rms_epsilon", "finite"}});
    all.push_back({"rope theta negative",
                   [] { return with([](GgufWriter& w) { w.set("llama.rope.freq_base", -1.0f); }); },
                   {"ropeTheta"}});
    all.push_back({"unsupported rope scaling",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.rope.scaling.type", std::string("yarn"));
                       });
                   },
                   {"llama.rope.scaling.type", "yarn"}});
    all.push_back({"partial rope",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("llama.rope.dimension_count", std::uint32_t{2});
                       });
                   },
                   {"llama.rope.dimension_count"}});
    all.push_back({"missing required tensor",
                   [] { return renamed(base(), "blk.0.ffn_down.weight", "blk.0.ffn_dowX.weight"); },
                   {"blk.0.ffn_down.weight", "missing"}});
    all.push_back({"missing bias of a qwen2 layer",
                   [] {
                       tiny::Spec spec;
                       spec.architecture = "qwen2";
                       spec.qkvBias = true;
                       return renamed(bytesOf(spec), "blk.0.attn_v.bias", "blk.0.attn_v.biaX");
                   },
                   {"blk.0.attn_v.bias", "missing"}});
    all.push_back(
        patchU64("wrong tensor shape",
                 [](const Bytes& b) { return tensorInfoAt(b, "blk.0.attn_k.weight").dimsAt + 8; },
                 2, {"blk.0.attn_k.weight", "shape {8, 2}, expected {8, 4}"}));
    all.push_back(patchU64("wrong embedding shape",
                           [embd](const Bytes& b) { return tensorInfoAt(b, embd).dimsAt + 8; }, 4,
                           {"token_embd.weight", "expected {8, 8}",
                            "one row per token of the 8 in tokenizer.ggml.tokens"}));
    all.push_back(
        patchU32("wrong tensor rank",
                 [](const Bytes& b) { return tensorInfoAt(b, "output_norm.weight").nDimsAt; }, 2,
                 {"output_norm.weight"}));

    // Metadata that contradicts the tensors or the token list.
    all.push_back(
        {"vocab_size contradicts the token list",
         [] { return with([](GgufWriter& w) { w.set("llama.vocab_size", std::uint32_t{9}); }); },
         {"llama.vocab_size", "says 9 tokens", "lists 8"}});
    all.push_back({"qwen2 without q/k/v biases",
                   [] {
                       tiny::Spec spec;
                       spec.architecture = "qwen2";
                       return bytesOf(spec);
                   },
                   {"blk.0.attn_q.bias", "qwen2 models have q/k/v biases"}});
    // Weights that would only ever compute NaN.
    all.push_back({"NaN weights",
                   [] {
                       Bytes b = base();
                       // The last tensor's data ends the file: poison its last element.
                       const float nan = std::numeric_limits<float>::quiet_NaN();
                       std::memcpy(b.data() + b.size() - 4, &nan, 4);
                       return b;
                   },
                   {"blk.0.ffn_down.weight", "is NaN", "non-finite"}});
    // Tokenizers the loader builds to check them; the errors name the file (expectRefused).
    all.push_back({"merge naming a missing token",
                   [] {
                       return with([](GgufWriter& w) {
                           w.setStringArray("tokenizer.ggml.merges", {"a b", "x y"});
                       });
                   },
                   {"tokenizer.ggml.merges", "merge 1 'x y'"}});
    all.push_back({"byte-level BPE without merges",
                   [] { return with([](GgufWriter& w) { w.remove("tokenizer.ggml.merges"); }); },
                   {"tokenizer.ggml.merges", "required for a byte-level BPE"}});
    all.push_back({"unknown pre-tokenizer",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("tokenizer.ggml.pre", std::string("no-such-splitter"));
                       });
                   },
                   {"no-such-splitter"}});
    all.push_back({"add_bos_token without a BOS id",
                   [] {
                       return with([](GgufWriter& w) {
                           w.set("tokenizer.ggml.add_bos_token", true);
                           w.remove("tokenizer.ggml.bos_token_id");
                       });
                   },
                   {"tokenizer.ggml.add_bos_token", "names none"}});
    return all;
}

void expectRefused(const std::filesystem::path& file, bool fileOnly,
                   const std::vector<std::string>& mentions) {
    try {
        if (fileOnly)
            GgufFile::open(file);
        else
            loadGgufModel(file);
    } catch (const ModelError& error) {
        const QString message = QString::fromStdString(error.what());
        for (const auto& mention : mentions)
            QVERIFY2(message.contains(QString::fromStdString(mention)),
                     qPrintable("'" + QString::fromStdString(mention) + "' not in: " + message));
        QVERIFY2(message.contains(QString::fromStdString(file.string())), qPrintable(message));
        return;
    }
    QFAIL("accepted a malformed file");
}

} // namespace

class TestHostileGguf : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::filesystem::path folder() const { return dir_.path().toStdString(); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(cases().size() >= 25);
    }

    void baseFilesAreValid() {
        // Otherwise every case below would pass for the wrong reason.
        const auto file = tiny::writeBytes(folder(), "base.gguf", base());
        QCOMPARE(loadGgufModel(file).config.layers, 1u);
        const auto kinds = tiny::writeBytes(folder(), "kinds.gguf", kindsWriter().bytes());
        QCOMPARE(GgufFile::open(kinds).metadata().size(), std::size_t{10});
    }

    void refused_data() {
        QTest::addColumn<int>("index");
        const auto all = cases();
        for (std::size_t i = 0; i < all.size(); ++i)
            QTest::newRow(all[i].name.c_str()) << static_cast<int>(i);
    }
    void refused() {
        QFETCH(int, index);
        const Case c = cases()[static_cast<std::size_t>(index)];
        const auto file =
            tiny::writeBytes(folder(), "case" + std::to_string(index) + ".gguf", c.build());
        expectRefused(file, c.fileOnly, c.mentions);
    }

    void callerLimitsApply() {
        const auto file = tiny::writeBytes(folder(), "limits.gguf", base());
        GgufLimits limits;
        limits.maxArrayElements = 4; // the vocabulary has 8 tokens
        QVERIFY_THROWS_EXCEPTION(ModelError, GgufFile::open(file, limits));
        limits = {};
        limits.maxStringBytes = 8; // "Tiny Test Model" is longer
        QVERIFY_THROWS_EXCEPTION(ModelError, GgufFile::open(file, limits));
        limits = {};
        limits.maxTensors = 10; // the model has 11
        QVERIFY_THROWS_EXCEPTION(ModelError, GgufFile::open(file, limits));
        limits = {};
        limits.maxMetadataEntries = 3;
        QVERIFY_THROWS_EXCEPTION(ModelError, GgufFile::open(file, limits));
        QCOMPARE(GgufFile::open(file, GgufLimits{}).tensorInfos().size(), std::size_t{11});
    }

    void everyTruncationIsRefused() {
        // Every proper prefix of a valid model: the last tensor's data ends the file, so
        // each one cuts something that is needed.
        const Bytes full = base();
        const auto file = folder() / "prefix.gguf";
        for (std::size_t length = 0; length < full.size(); ++length) {
            tiny::writeBytes(
                folder(), "prefix.gguf",
                Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(length)));
            bool refused = false;
            try {
                loadGgufModel(file);
            } catch (const ModelError&) {
                refused = true;
            }
            if (!refused) QFAIL(qPrintable(QString("prefix of %1 bytes accepted").arg(length)));
        }
        // The metadata-only file ends in alignment padding, which may be cut: every prefix
        // that cuts into the last value must fail, and the unpadded file must open.
        const Bytes kinds = kindsWriter().bytes();
        const std::size_t end = tiny::metadataAt(kinds, "k.nested").valueAt + 12 + 12 + 16;
        tiny::writeBytes(folder(), "prefix.gguf",
                         Bytes(kinds.begin(), kinds.begin() + static_cast<std::ptrdiff_t>(end)));
        QCOMPARE(GgufFile::open(file).metadata().size(), std::size_t{10});
        for (std::size_t length = 0; length < end; ++length) {
            tiny::writeBytes(
                folder(), "prefix.gguf",
                Bytes(kinds.begin(), kinds.begin() + static_cast<std::ptrdiff_t>(length)));
            QVERIFY_THROWS_EXCEPTION(ModelError, GgufFile::open(file));
        }
    }

    void randomCorruptionNeverCrashes() {
        // Random bytes and boundary integers written anywhere: the loader either accepts the
        // file or refuses it with a ModelError; any other exception (or a crash under the
        // sanitizers) fails. INFERSCOPE_FUZZ_ITERATIONS runs longer campaigns by hand.
        const Bytes full = base();
        const char* requested = std::getenv("INFERSCOPE_FUZZ_ITERATIONS");
        const int iterations = requested ? std::max(1, std::atoi(requested)) : 1500;
        std::mt19937_64 random(20240611);
        std::uniform_int_distribution<std::size_t> position(0, full.size() - 1);
        std::uniform_int_distribution<int> byte(0, 255), flips(1, 4), kind(0, 2);
        const std::uint64_t boundaries[] = {
            0,    1,      2,          3,          31,         32,         64,    0x7F,
            0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1ull << 32, 1ull << 62, ~0ull, ~0ull - 31};
        std::uniform_int_distribution<std::size_t> boundary(0, std::size(boundaries) - 1);
        const auto file = folder() / "fuzz.gguf";
        int refused = 0;
        for (int i = 0; i < iterations; ++i) {
            Bytes bytes = full;
            const int count = flips(random);
            for (int f = 0; f < count; ++f) {
                std::size_t at = position(random);
                if (i % 2 == 0) at %= 1700; // bias towards the header, metadata and infos
                switch (kind(random)) {
                case 0:
                    bytes[at] = static_cast<std::uint8_t>(byte(random));
                    break;
                case 1:
                    if (at + 4 <= bytes.size())
                        tiny::put<std::uint32_t>(
                            bytes, at, static_cast<std::uint32_t>(boundaries[boundary(random)]));
                    break;
                default:
                    if (at + 8 <= bytes.size())
                        tiny::put<std::uint64_t>(bytes, at, boundaries[boundary(random)]);
                    break;
                }
            }
            if (i % 7 == 0) bytes.resize(position(random)); // and truncated
            tiny::writeBytes(folder(), "fuzz.gguf", bytes);
            try {
                loadGgufModel(file);
            } catch (const ModelError&) {
                ++refused;
            }
        }
        qInfo("%d of %d corrupted files refused", refused, iterations);
        QVERIFY(refused > iterations / 10); // the mutations do reach the structure
    }
};

QTEST_APPLESS_MAIN(TestHostileGguf)
#include "test_hostile_gguf.moc"
