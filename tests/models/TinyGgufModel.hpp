#pragma once
// A tiny but complete GGUF model (one layer, hidden size 8, an 8-token byte-level BPE
// vocabulary) for the GGUF reader tests: small enough that a test can try every
// truncation of it, complete enough that loadGgufModel accepts it.
#include "models/formats/GgufWriter.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tiny {

using namespace inferscope::models;

struct Spec {
    std::string architecture = "llama";
    std::uint32_t layers = 1;
    std::uint32_t hidden = 8;
    std::uint32_t heads = 2;
    std::uint32_t kvHeads = 1;
    std::uint32_t headDim = 4;
    std::uint32_t ffn = 16;
    bool tied = true;
    bool qkvBias = false;
};

inline std::vector<std::string> vocabulary() {
    return {"<|endoftext|>", "a", "b", "c", "ab", "bc", "abc", "Ġ"};
}

// Deterministic, distinct values per tensor so views can be checked element by element.
inline std::vector<float> values(std::uint64_t count, float seed) {
    std::vector<float> out(count);
    for (std::uint64_t i = 0; i < count; ++i)
        out[i] = 0.1f * std::sin(seed + 0.37f * static_cast<float>(i));
    return out;
}

inline void addF32(GgufWriter& writer, const std::string& name, std::vector<std::uint64_t> shape,
                   float seed) {
    std::uint64_t count = 1;
    for (auto extent : shape) count *= extent;
    writer.addF32Tensor(name, std::move(shape), values(count, seed));
}

inline GgufWriter writer(const Spec& spec = {}) {
    GgufWriter out;
    const std::string a = spec.architecture + ".";
    out.set("general.architecture", spec.architecture);
    out.set("general.name", std::string("Tiny Test Model"));
    out.set(a + "block_count", spec.layers);
    out.set(a + "context_length", std::uint32_t{128});
    out.set(a + "embedding_length", spec.hidden);
    out.set(a + "feed_forward_length", spec.ffn);
    out.set(a + "attention.head_count", spec.heads);
    out.set(a + "attention.head_count_kv", spec.kvHeads);
    out.set(a + "rope.freq_base", 10000.0f);
    out.set(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    if (spec.headDim * spec.heads != spec.hidden) out.set(a + "attention.key_length", spec.headDim);
    out.set("tokenizer.ggml.model", std::string("gpt2"));
    out.set("tokenizer.ggml.pre", std::string("smollm"));
    out.setStringArray("tokenizer.ggml.tokens", vocabulary());
    out.setI32Array("tokenizer.ggml.token_type", {3, 1, 1, 1, 1, 1, 1, 1});
    out.setStringArray("tokenizer.ggml.merges", {"a b", "b c", "ab c"});
    out.set("tokenizer.ggml.bos_token_id", std::uint32_t{0});
    out.set("tokenizer.ggml.eos_token_id", std::uint32_t{0});
    out.set("tokenizer.ggml.add_bos_token", false);
    out.set("tokenizer.chat_template", std::string("{{ '<|im_start|>' }}"));

    const std::uint64_t hidden = spec.hidden, vocab = vocabulary().size();
    const std::uint64_t q = std::uint64_t{spec.heads} * spec.headDim;
    const std::uint64_t kv = std::uint64_t{spec.kvHeads} * spec.headDim;
    addF32(out, "token_embd.weight", {hidden, vocab}, 1.0f);
    addF32(out, "output_norm.weight", {hidden}, 2.0f);
    if (!spec.tied) addF32(out, "output.weight", {hidden, vocab}, 3.0f);
    for (std::uint32_t layer = 0; layer < spec.layers; ++layer) {
        const std::string b = "blk." + std::to_string(layer) + ".";
        const float s = 10.0f * static_cast<float>(layer + 1);
        addF32(out, b + "attn_norm.weight", {hidden}, s + 1);
        addF32(out, b + "attn_q.weight", {hidden, q}, s + 2);
        addF32(out, b + "attn_k.weight", {hidden, kv}, s + 3);
        addF32(out, b + "attn_v.weight", {hidden, kv}, s + 4);
        if (spec.qkvBias) {
            addF32(out, b + "attn_q.bias", {q}, s + 5);
            addF32(out, b + "attn_k.bias", {kv}, s + 6);
            addF32(out, b + "attn_v.bias", {kv}, s + 7);
        }
        addF32(out, b + "attn_output.weight", {q, hidden}, s + 8);
        addF32(out, b + "ffn_norm.weight", {hidden}, s + 9);
        addF32(out, b + "ffn_gate.weight", {hidden, spec.ffn}, s + 10);
        addF32(out, b + "ffn_up.weight", {hidden, spec.ffn}, s + 11);
        addF32(out, b + "ffn_down.weight", {spec.ffn, hidden}, s + 12);
    }
    return out;
}

inline std::filesystem::path writeBytes(const std::filesystem::path& folder,
                                        const std::string& name,
                                        const std::vector<std::uint8_t>& bytes) {
    const auto path = folder / name;
    // Unlink first: truncating a file in place is slow on some file systems (ext4 journal),
    // and the truncation tests write thousands of files.
    std::filesystem::remove(path);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

// Byte offset of the first occurrence of text in bytes (npos if absent).
inline std::size_t find(const std::vector<std::uint8_t>& bytes, const std::string& text) {
    for (std::size_t i = 0; i + text.size() <= bytes.size(); ++i)
        if (std::memcmp(bytes.data() + i, text.data(), text.size()) == 0) return i;
    return std::string::npos;
}

template <typename T> T get(const std::vector<std::uint8_t>& bytes, std::size_t at) {
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    return value;
}

template <typename T> void put(std::vector<std::uint8_t>& bytes, std::size_t at, T value) {
    std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// Byte offset of a GGUF string (u64 length, then the bytes) holding exactly text.
inline std::size_t findString(const std::vector<std::uint8_t>& bytes, const std::string& text) {
    std::string encoded(8, '\0');
    const std::uint64_t length = text.size();
    std::memcpy(encoded.data(), &length, 8);
    const std::size_t at = find(bytes, encoded + text);
    if (at == std::string::npos) throw std::runtime_error("test bug: no string " + text);
    return at;
}

// Where the fields of a tensor info lie, found from its name.
struct TensorInfoAt {
    std::size_t lengthAt, nDimsAt, dimsAt, typeAt, offsetAt;
};
inline TensorInfoAt tensorInfoAt(const std::vector<std::uint8_t>& bytes, const std::string& name) {
    TensorInfoAt at{};
    at.lengthAt = findString(bytes, name);
    const std::size_t nameAt = at.lengthAt + 8;
    at.nDimsAt = nameAt + name.size();
    at.dimsAt = at.nDimsAt + 4;
    at.typeAt = at.dimsAt + 8 * get<std::uint32_t>(bytes, at.nDimsAt);
    at.offsetAt = at.typeAt + 4;
    return at;
}

// Where a metadata entry's value type and value lie, found from its key.
struct MetadataAt {
    std::size_t keyLengthAt, typeAt, valueAt;
};
inline MetadataAt metadataAt(const std::vector<std::uint8_t>& bytes, const std::string& key) {
    const std::size_t keyAt = findString(bytes, key) + 8;
    return {keyAt - 8, keyAt + key.size(), keyAt + key.size() + 4};
}

} // namespace tiny
