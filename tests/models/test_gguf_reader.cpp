// GGUF writer -> reader round trips: every metadata value type, arrays (nested too),
// version 2 files, alignments other than 32, tensor data views, and loadGgufModel's
// reading of configuration, tokenizer and weights from a small complete model.
#include "TinyGgufModel.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/formats/GgufWriter.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>
#include <numbers>

using namespace inferscope::models;

namespace {

std::shared_ptr<GgufArray> array(GgufValueType type, std::vector<GgufValue> values) {
    auto out = std::make_shared<GgufArray>();
    out->elementType = type;
    out->values = std::move(values);
    return out;
}

// Deep equality (arrays are held by pointer).
bool equal(const GgufValue& a, const GgufValue& b) {
    if (a.index() != b.index()) return false;
    if (const auto* left = std::get_if<std::shared_ptr<GgufArray>>(&a)) {
        const auto& right = std::get<std::shared_ptr<GgufArray>>(b);
        if ((*left)->elementType != right->elementType) return false;
        if ((*left)->values.size() != right->values.size()) return false;
        for (std::size_t i = 0; i < right->values.size(); ++i)
            if (!equal((*left)->values[i], right->values[i])) return false;
        return true;
    }
    return a == b;
}

std::vector<std::pair<std::string, GgufValue>> everyKind() {
    return {
        {"test.u8", std::uint8_t{200}},
        {"test.i8", std::int8_t{-100}},
        {"test.u16", std::uint16_t{60000}},
        {"test.i16", std::int16_t{-30000}},
        {"test.u32", std::uint32_t{4000000000u}},
        {"test.i32", std::int32_t{-2000000000}},
        {"test.f32", 1.25f},
        {"test.bool_true", true},
        {"test.bool_false", false},
        {"test.string", std::string("h\xC3\xA9llo, world")},
        {"test.empty_string", std::string()},
        {"test.u64", std::uint64_t{(1ull << 63) + 5}},
        {"test.i64", std::int64_t{-(1ll << 62)}},
        {"test.f64", std::numbers::pi},
        {"test.strings", array(GgufValueType::String,
                               {std::string("one"), std::string(""), std::string("th ree")})},
        {"test.i32s", array(GgufValueType::I32, {std::int32_t{-1}, std::int32_t{7}})},
        {"test.f32s", array(GgufValueType::F32, {0.5f, -2.0f, 3.0f})},
        {"test.bools", array(GgufValueType::Bool, {true, false})},
        {"test.empty", array(GgufValueType::U64, {})},
        {"test.nested",
         array(GgufValueType::Array,
               {array(GgufValueType::U16, {std::uint16_t{1}, std::uint16_t{2}}),
                array(GgufValueType::String, {std::string("x")}),
                array(GgufValueType::Array, {array(GgufValueType::I8, {std::int8_t{-3}})})})},
    };
}

std::vector<std::uint8_t> sequenceBytes(std::size_t count, std::uint8_t seed) {
    std::vector<std::uint8_t> bytes(count);
    for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<std::uint8_t>(seed + 31 * i);
    return bytes;
}

// One tensor of several types; their byte contents are arbitrary (views are compared raw).
GgufWriter tensorWriter(std::uint64_t alignment) {
    GgufWriter writer;
    writer.setAlignment(alignment);
    writer.set("general.architecture", std::string("llama"));
    writer.addF32Tensor("a.f32", {3}, {1.0f, -2.0f, 0.5f});
    writer.addTensor("b.f16", TensorType::F16, {5, 1}, sequenceBytes(10, 1));
    writer.addTensor("c.q8_0", TensorType::Q8_0, {32, 2}, sequenceBytes(68, 2));
    writer.addTensor("d.q4_k", TensorType::Q4_K, {256}, sequenceBytes(144, 3));
    writer.addTensor("e.bf16", TensorType::BF16, {2, 1, 1, 3}, sequenceBytes(12, 4));
    return writer;
}

} // namespace

class TestGgufReader : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::filesystem::path path(const std::string& name) const {
        return std::filesystem::path(dir_.path().toStdString()) / name;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void everyMetadataTypeRoundTrips() {
        GgufWriter writer;
        for (const auto& [key, value] : everyKind()) writer.set(key, value);
        writer.write(path("kinds.gguf"));
        const GgufFile gguf = GgufFile::open(path("kinds.gguf"));
        QCOMPARE(gguf.version(), 3u);
        QCOMPARE(gguf.alignment(), 32ull);
        QCOMPARE(gguf.metadata().size(), everyKind().size());
        QVERIFY(gguf.tensorInfos().empty());
        for (const auto& [key, value] : everyKind()) {
            const GgufValue* read = gguf.find(key);
            QVERIFY2(read, key.c_str());
            QVERIFY2(equal(*read, value), key.c_str());
        }
        QVERIFY(gguf.find("test.missing") == nullptr);
    }

    void typedGetters() {
        GgufWriter writer;
        for (const auto& [key, value] : everyKind()) writer.set(key, value);
        writer.write(path("getters.gguf"));
        const GgufFile gguf = GgufFile::open(path("getters.gguf"));
        QCOMPARE(gguf.getUInt("test.u8").value(), 200ull);
        QCOMPARE(gguf.getUInt("test.u64").value(), (1ull << 63) + 5);
        QCOMPARE(gguf.getUInt("test.u32").value(), 4000000000ull);
        QVERIFY(!gguf.getUInt("test.absent").has_value());
        QCOMPARE(gguf.getFloat("test.i16").value(), -30000.0);
        QCOMPARE(gguf.getFloat("test.f32").value(), 1.25);
        QCOMPARE(gguf.getFloat("test.f64").value(), std::numbers::pi);
        QCOMPARE(gguf.getBool("test.bool_true").value(), true);
        QCOMPARE(gguf.getBool("test.bool_false").value(), false);
        QCOMPARE(gguf.getString("test.string").value(), std::string("h\xC3\xA9llo, world"));
        QCOMPARE(gguf.getString("test.empty_string").value(), std::string());
        const auto strings = gguf.getStringArray("test.strings").value();
        QCOMPARE(strings.size(), std::size_t{3});
        QCOMPARE(strings[2], std::string("th ree"));
        const auto numbers = gguf.getNumberArray("test.f32s").value();
        QCOMPARE(numbers, (std::vector<double>{0.5, -2.0, 3.0}));
        QCOMPARE(gguf.getNumberArray("test.i32s").value(), (std::vector<double>{-1.0, 7.0}));
        QVERIFY(gguf.getNumberArray("test.empty").value().empty());
        QVERIFY(gguf.metadataOffset("test.u8").has_value());
        QCOMPARE(gguf.metadataOffset("test.u8").value(), 24ull); // right after the header

        // Present with another type: a ModelError naming the key.
        auto expectError = [&](auto call, const char* key) {
            try {
                call();
                QFAIL("no error");
            } catch (const ModelError& error) {
                QVERIFY2(QString(error.what()).contains(key), error.what());
                QCOMPARE(error.field(), std::string(key));
            }
        };
        expectError([&] { gguf.getUInt("test.i8"); }, "test.i8"); // negative
        expectError([&] { gguf.getUInt("test.f32"); }, "test.f32");
        expectError([&] { gguf.getUInt("test.bool_true"); }, "test.bool_true");
        expectError([&] { gguf.getString("test.u32"); }, "test.u32");
        expectError([&] { gguf.getBool("test.u8"); }, "test.u8");
        expectError([&] { gguf.getFloat("test.string"); }, "test.string");
        expectError([&] { gguf.getStringArray("test.i32s"); }, "test.i32s");
        expectError([&] { gguf.getNumberArray("test.strings"); }, "test.strings");
        expectError([&] { gguf.getNumberArray("test.nested"); }, "test.nested");
        expectError([&] { gguf.getStringArray("test.string"); }, "test.string");
    }

    void tensorViews_data() {
        QTest::addColumn<qulonglong>("alignment");
        QTest::newRow("32") << 32ull;
        QTest::newRow("8") << 8ull;
        QTest::newRow("64") << 64ull;
        QTest::newRow("1") << 1ull;
        QTest::newRow("4096") << 4096ull;
    }
    void tensorViews() {
        QFETCH(qulonglong, alignment);
        const GgufWriter writer = tensorWriter(alignment);
        const auto file = path("tensors" + std::to_string(alignment) + ".gguf");
        writer.write(file);
        const GgufFile gguf = GgufFile::open(file);
        QCOMPARE(gguf.alignment(), static_cast<std::uint64_t>(alignment));
        QCOMPARE(gguf.getUInt("general.alignment").has_value(), alignment != 32);
        QCOMPARE(gguf.dataOffset() % alignment, 0ull);
        const auto& infos = gguf.tensorInfos();
        QCOMPARE(infos.size(), std::size_t{5});
        QCOMPARE(infos[0].name, std::string("a.f32"));
        QCOMPARE(infos[1].type, TensorType::F16);
        QCOMPARE(infos[1].shape, (std::vector<std::uint64_t>{5, 1}));
        QCOMPARE(infos[4].shape, (std::vector<std::uint64_t>{2, 1, 1, 3}));
        QCOMPARE(infos[3].type, TensorType::Q4_K);
        for (const auto& info : infos) QCOMPARE(info.offset % alignment, 0ull);

        const auto f32 = gguf.tensorData(infos[0]);
        QCOMPARE(f32.size(), std::size_t{12});
        std::vector<float> values(3);
        dequantize(TensorType::F32, f32, values);
        QCOMPARE(values, (std::vector<float>{1.0f, -2.0f, 0.5f}));
        const std::vector<std::pair<std::size_t, std::uint8_t>> raw{{1, 1}, {2, 2}, {3, 3}, {4, 4}};
        const std::vector<std::size_t> sizes{0, 10, 68, 144, 12};
        for (auto [index, seed] : raw) {
            const auto view = gguf.tensorData(infos[index]);
            const auto expected = sequenceBytes(sizes[index], seed);
            QCOMPARE(view.size(), expected.size());
            QVERIFY(std::equal(view.begin(), view.end(), expected.begin()));
            // A view into the mapping, not a copy.
            const auto mapped = gguf.mapping()->bytes();
            QVERIFY(view.data() >= mapped.data() &&
                    view.data() + view.size() <= mapped.data() + mapped.size());
            QCOMPARE(static_cast<std::uint64_t>(view.data() - mapped.data()),
                     gguf.dataOffset() + infos[index].offset);
        }
    }

    void version2File() {
        // v2 and v3 share the layout (v3 added big-endian files, flagged by the version).
        std::vector<std::uint8_t> bytes = tensorWriter(32).bytes();
        tiny::put<std::uint32_t>(bytes, 4, 2);
        const auto file = tiny::writeBytes(dir_.path().toStdString(), "v2.gguf", bytes);
        const GgufFile gguf = GgufFile::open(file);
        QCOMPARE(gguf.version(), 2u);
        QCOMPARE(gguf.tensorInfos().size(), std::size_t{5});
        QCOMPARE(gguf.getString("general.architecture").value(), std::string("llama"));
    }

    void writerReplacesKeysInPlace() {
        GgufWriter writer;
        writer.set("k.first", std::uint32_t{1});
        writer.set("k.second", std::uint32_t{2});
        writer.set("k.first", std::string("replaced"));
        writer.write(path("replace.gguf"));
        const GgufFile gguf = GgufFile::open(path("replace.gguf"));
        QCOMPARE(gguf.metadata().size(), std::size_t{2});
        QCOMPARE(gguf.getString("k.first").value(), std::string("replaced"));
        QVERIFY(gguf.metadataOffset("k.first").value() < gguf.metadataOffset("k.second").value());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 writer.addTensor("bad", TensorType::Q8_0, {32}, {1, 2, 3}));
    }

    void loadsTinyModel() {
        tiny::writer().write(path("tiny.gguf"));
        LoadedModel model = loadGgufModel(path("tiny.gguf"));
        const ModelConfig& config = model.config;
        QCOMPARE(config.architecture, std::string("llama"));
        QCOMPARE(config.name, std::string("Tiny Test Model"));
        QCOMPARE(config.layers, 1u);
        QCOMPARE(config.hiddenSize, 8u);
        QCOMPARE(config.heads, 2u);
        QCOMPARE(config.kvHeads, 1u);
        QCOMPARE(config.headDim, 4u);
        QCOMPARE(config.ffnSize, 16u);
        QCOMPARE(config.vocabSize, 8u);
        QCOMPARE(config.contextLength, 128u);
        QCOMPARE(config.ropeTheta, 10000.0f);
        QCOMPARE(config.rmsNormEps, 1e-5f);
        QVERIFY(config.tiedEmbeddings);
        QVERIFY(!config.qkvBias);
        QCOMPARE(config.ropePairing, RopePairing::Adjacent);
        QCOMPARE(config.ropeScaling.type, RopeScalingType::None);
        QCOMPARE(model.format, ModelFormat::Gguf);
        QCOMPARE(model.fileBytes,
                 static_cast<std::uint64_t>(std::filesystem::file_size(path("tiny.gguf"))));

        const TokenizerData& tokenizer = model.tokenizer;
        QCOMPARE(tokenizer.kind, TokenizerKind::ByteLevelBpe);
        QCOMPARE(tokenizer.preTokenizer, std::string("smollm"));
        QCOMPARE(tokenizer.tokens, tiny::vocabulary());
        QCOMPARE(tokenizer.tokenTypes.size(), std::size_t{8});
        QCOMPARE(tokenizer.tokenTypes[0], TokenType::Control);
        QCOMPARE(tokenizer.tokenTypes[1], TokenType::Normal);
        QCOMPARE(tokenizer.merges, (std::vector<std::string>{"a b", "b c", "ab c"}));
        QVERIFY(tokenizer.scores.empty());
        QCOMPARE(tokenizer.bosId.value(), 0);
        QCOMPARE(tokenizer.eosId.value(), 0);
        QVERIFY(!tokenizer.unknownId.has_value());
        QVERIFY(!tokenizer.addBos);
        QVERIFY(!tokenizer.addEos);
        QVERIFY(!tokenizer.addSpacePrefix);
        QCOMPARE(tokenizer.chatTemplate, std::string("{{ '<|im_start|>' }}"));

        // Weights: views that outlive the reader (the store owns the mapping), values as written.
        LoadedModel moved = std::move(model);
        QCOMPARE(moved.weights.tensors().size(), std::size_t{11});
        const StoredTensor& q = moved.weights.at("blk.0.attn_q.weight");
        QCOMPARE(q.shape, (std::vector<std::uint64_t>{8, 8}));
        QCOMPARE(q.rows(), 8ull);
        QCOMPARE(q.cols(), 8ull);
        QCOMPARE(moved.weights.dequantized("blk.0.attn_q.weight"), tiny::values(64, 12.0f));
        QCOMPARE(moved.weights.dequantized("token_embd.weight"), tiny::values(64, 1.0f));
        QCOMPARE(moved.weights.dequantized("blk.0.ffn_down.weight"), tiny::values(128, 22.0f));
        QCOMPARE(moved.weights.totalElements(), 64ull + 8 + 8 + 64 + 32 + 32 + 64 + 8 + 128 * 3);
        QCOMPARE(moved.weights.bytesByType().at(TensorType::F32),
                 4 * moved.weights.totalElements());
        QVERIFY(!moved.weights.contains("output.weight"));
        QVERIFY_THROWS_EXCEPTION(ModelError, moved.weights.at("output.weight"));
        StoredTensor duplicate = q;
        QVERIFY_THROWS_EXCEPTION(ModelError, moved.weights.add(duplicate));
    }

    void loadsQwen2WithBiasesAndOutput() {
        tiny::Spec spec;
        spec.architecture = "qwen2";
        spec.qkvBias = true;
        spec.tied = false;
        spec.layers = 2;
        spec.headDim = 8; // attention width 16 != hidden 8: key_length is written
        tiny::writer(spec).write(path("qwen2.gguf"));
        const LoadedModel model = loadGgufModel(path("qwen2.gguf"));
        QCOMPARE(model.config.architecture, std::string("qwen2"));
        QCOMPARE(model.config.ropePairing, RopePairing::SplitHalf);
        QVERIFY(model.config.qkvBias);
        QVERIFY(!model.config.tiedEmbeddings);
        QCOMPARE(model.config.layers, 2u);
        QCOMPARE(model.config.headDim, 8u);
        QCOMPARE(model.weights.at("blk.1.attn_k.bias").shape, (std::vector<std::uint64_t>{8}));
        QCOMPARE(model.weights.dequantized("output.weight"), tiny::values(64, 3.0f));
    }

    void ropeScalingAndSentencePiece() {
        GgufWriter writer = tiny::writer();
        writer.addF32Tensor("rope_freqs.weight", {2}, {1.0f, 8.0f});
        writer.set("llama.rope.scaling.original_context_length", std::uint32_t{8192});
        writer.set("tokenizer.ggml.model", std::string("llama"));
        writer.setF32Array("tokenizer.ggml.scores", {0, -1, -2, -3, -4, -5, -6, -7});
        writer.set("tokenizer.ggml.add_bos_token", GgufValue(true));
        writer.write(path("llama3.gguf"));
        const LoadedModel model = loadGgufModel(path("llama3.gguf"));
        QCOMPARE(model.config.ropeScaling.type, RopeScalingType::Llama3);
        QCOMPARE(model.config.ropeScaling.originalContext, 8192u);
        QVERIFY(model.weights.contains("rope_freqs.weight"));
        QCOMPARE(model.weights.dequantized("rope_freqs.weight"), (std::vector<float>{1.0f, 8.0f}));
        QCOMPARE(model.tokenizer.kind, TokenizerKind::SentencePieceBpe);
        QCOMPARE(model.tokenizer.scores.size(), std::size_t{8});
        QCOMPARE(model.tokenizer.scores[7], -7.0f);
        QVERIFY(model.tokenizer.addBos);
        QVERIFY(model.tokenizer.addSpacePrefix); // SentencePiece default when the key is absent

        GgufWriter linear = tiny::writer();
        linear.set("llama.rope.scaling.type", std::string("linear"));
        linear.set("llama.rope.scaling.factor", 4.0f);
        linear.write(path("linear.gguf"));
        const LoadedModel scaled = loadGgufModel(path("linear.gguf"));
        QCOMPARE(scaled.config.ropeScaling.type, RopeScalingType::Linear);
        QCOMPARE(scaled.config.ropeScaling.factor, 4.0f);
    }
};

QTEST_APPLESS_MAIN(TestGgufReader)
#include "test_gguf_reader.moc"
