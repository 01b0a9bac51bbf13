// Malformed and hostile safetensors checkpoints, config.json and tokenizer.json files:
// each must be refused with a ModelError naming the file, the field and (for the binary
// file) the byte offset; none may crash (run under ASan/UBSan to make "crash" strict).
#include "models/ModelError.hpp"
#include "models/formats/HfConfig.hpp"
#include "models/formats/SafetensorsFile.hpp"
#include "models/formats/SafetensorsWriter.hpp"
#include "models/formats/StrictJson.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <optional>

using namespace inferscope::models;
using Bytes = std::vector<std::uint8_t>;

namespace {

// A safetensors file from raw header text and a data section of dataBytes bytes.
Bytes rawFile(const std::string& header, std::size_t dataBytes,
              std::optional<std::uint64_t> declaredHeaderSize = std::nullopt) {
    Bytes bytes;
    const std::uint64_t size = declaredHeaderSize.value_or(header.size());
    for (int shift = 0; shift < 64; shift += 8)
        bytes.push_back(static_cast<std::uint8_t>(size >> shift));
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.resize(bytes.size() + dataBytes, 0x5A);
    return bytes;
}

void writeBytes(const std::filesystem::path& path, const Bytes& bytes) {
    // A fresh file: truncating one in place makes ext4 flush it on close (auto_da_alloc),
    // which costs milliseconds per rewrite.
    std::filesystem::remove(path);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

template <typename Action> std::optional<ModelError> modelErrorOf(Action&& action) {
    try {
        action();
    } catch (const ModelError& error) {
        return error;
    }
    return std::nullopt;
}

// A small tokenizer.json with the given vocabulary, merges and pre-tokenizer.
std::string tokenizerWith(const std::string& vocab, const std::string& merges,
                          const std::string& preTokenizer = R"({"type": "ByteLevel"})") {
    return R"({"added_tokens": [], "pre_tokenizer": )" + preTokenizer +
           R"(, "model": {"type": "BPE", "vocab": )" + vocab + R"(, "merges": )" + merges + "}}";
}

// A valid config.json with one field replaced (or removed when value is empty).
std::string configWith(const std::string& key, const std::string& value) {
    std::map<std::string, std::string> fields{
        {"model_type", "\"llama\""},        {"architectures", "[\"LlamaForCausalLM\"]"},
        {"num_hidden_layers", "2"},         {"hidden_size", "64"},
        {"num_attention_heads", "4"},       {"num_key_value_heads", "2"},
        {"intermediate_size", "96"},        {"vocab_size", "300"},
        {"max_position_embeddings", "512"}, {"rms_norm_eps", "1e-5"},
    };
    if (value.empty())
        fields.erase(key);
    else
        fields[key] = value;
    std::string text = "{";
    for (const auto& [name, json] : fields)
        text += (text.size() > 1 ? ", \"" : "\"") + name + "\": " + json;
    return text + "}";
}

} // namespace

class TestHostileSafetensors : public QObject {
    Q_OBJECT
private slots:
    void refusesMalformedFile_data();
    void refusesMalformedFile();
    void survivesEveryTruncationAndByteFlip();
    void refusesHostileIndex_data();
    void refusesHostileIndex();
    void refusesBadConfig_data();
    void refusesBadConfig();
    void refusesBadTokenizer_data();
    void refusesBadTokenizer();
    void strictJsonRefusesDuplicatesAndDepth();
};

void TestHostileSafetensors::refusesMalformedFile_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("field");   // the error's field must contain this
    QTest::addColumn<QString>("message"); // and its message this
    QTest::addColumn<qint64>("offset");   // -1: any offset (but one must be given)

    auto add = [](const char* name, const Bytes& bytes, const char* field, const char* message,
                  qint64 offset = -1) {
        QTest::newRow(name) << QByteArray(reinterpret_cast<const char*>(bytes.data()),
                                          static_cast<qsizetype>(bytes.size()))
                            << QString(field) << QString(message) << offset;
    };
    const std::string good = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
    add("shorter than the size field", Bytes{1, 2, 3}, "header size", "too short", 0);
    add("header size past the end", rawFile("{}", 0, 1000), "header size", "past the end", 0);
    add("absurd header size", rawFile("{}", 0, 1ull << 40), "header size", "exceeds the limit", 0);
    add("header size of 2^64-1", rawFile("{}", 0, ~0ull), "header size", "exceeds the limit", 0);
    add("invalid JSON", rawFile(R"({"a": {"dtype": "F32",)", 0), "header", "invalid JSON");
    add("invalid UTF-8 in a name", rawFile("{\"\xff\xfe\": 1}", 0), "header", "invalid JSON");
    add("header is an array", rawFile("[1, 2]", 0), "header", "JSON object", 8);
    add("entry is not an object", rawFile(R"({"a": [0, 8]})", 8), "tensor 'a'",
        "must be an object");
    add("unknown dtype",
        rawFile(R"({"a": {"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}})", 8),
        "tensor 'a'.dtype", "unknown dtype");
    add("unsupported dtype",
        rawFile(R"({"a": {"dtype": "I8", "shape": [8], "data_offsets": [0, 8]}})", 8),
        "tensor 'a'.dtype", "not supported");
    add("shape product overflows",
        rawFile(
            R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 8]}})",
            8),
        "tensor 'a'.shape", "overflows");
    add("negative dimension",
        rawFile(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8),
        "tensor 'a'.shape", "non-negative");
    add("too many dimensions",
        rawFile(
            R"({"a": {"dtype": "F32", "shape": [1,1,1,1,1,1,1,1,1,2], "data_offsets": [0, 8]}})",
            8),
        "tensor 'a'.shape", "dimensions exceed");
    add("data_offsets past the data",
        rawFile(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4),
        "tensor 'a'.data_offsets", "runs past");
    add("data_offsets end before begin",
        rawFile(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})", 8),
        "tensor 'a'.data_offsets", "before begin");
    add("data_offsets of three numbers",
        rawFile(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8, 9]}})", 8),
        "tensor 'a'.data_offsets", "two non-negative integers");
    add("byte count differs from the shape",
        rawFile(R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 8]}})", 8),
        "tensor 'a'.data_offsets", "needs 4");
    add("overlapping tensors",
        rawFile(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                12),
        "tensor 'b'.data_offsets", "overlaps tensor 'a'");
    add("aliased tensors",
        rawFile(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
                8),
        "data_offsets", "overlaps");
    {
        const std::string header = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                   "b": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}})";
        add("hole between tensors", rawFile(header, 16), "tensor 'b'.data_offsets", "hole of 4",
            static_cast<qint64>(8 + header.size() + 8));
    }
    add("bytes after the last tensor", rawFile("{" + good + "}", 12), "data",
        "belong to no tensor");
    add("duplicate tensor names",
        rawFile(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                   "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                8),
        "header", "duplicate key \"a\"");
    add("metadata value not a string",
        rawFile(R"({"__metadata__": {"format": 1}, )" + good + "}", 8), "__metadata__.format",
        "must be strings");
    add("deeply nested header",
        rawFile("{\"a\": " + std::string(200, '[') + std::string(200, ']') + "}", 0), "header",
        "nested deeper");
    add("missing dtype", rawFile(R"({"a": {"shape": [2], "data_offsets": [0, 8]}})", 8),
        "tensor 'a'.dtype", "missing");
}

void TestHostileSafetensors::refusesMalformedFile() {
    QFETCH(QByteArray, file);
    QFETCH(QString, field);
    QFETCH(QString, message);
    QFETCH(qint64, offset);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "bad.safetensors";
    writeBytes(path, Bytes(file.begin(), file.end()));
    const auto error = modelErrorOf([&] { SafetensorsFile::open(path); });
    QVERIFY2(error, "the file was accepted");
    const QString what = QString::fromStdString(error->what());
    QCOMPARE(QString::fromStdString(error->file()), QString::fromStdString(path.string()));
    QVERIFY2(QString::fromStdString(error->field()).contains(field), qPrintable(what));
    QVERIFY2(what.contains(message), qPrintable(what));
    QVERIFY2(error->offset().has_value(), qPrintable(what));
    if (offset >= 0) QCOMPARE(static_cast<qint64>(*error->offset()), offset);
    QVERIFY2(*error->offset() <= static_cast<std::uint64_t>(file.size()), qPrintable(what));
}

void TestHostileSafetensors::survivesEveryTruncationAndByteFlip() {
    SafetensorsWriter writer;
    writer.setMetadata("format", "pt");
    const std::vector<float> values{1.0f, -2.0f, 3.5f, 0.25f};
    writer.addFloatTensor("w", TensorType::F32, {2, 2}, values);
    writer.addFloatTensor("b", TensorType::BF16, {4}, values);
    const Bytes good = writer.bytes();
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "cut.safetensors";
    writeBytes(path, good);
    QCOMPARE(SafetensorsFile::open(path).tensors().size(), std::size_t{2});

    // Every truncation is refused (the tensors must tile the data exactly).
    for (std::size_t length = 0; length < good.size(); ++length) {
        writeBytes(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length)));
        QVERIFY2(modelErrorOf([&] { SafetensorsFile::open(path); }),
                 qPrintable(QString("truncation to %1 bytes accepted").arg(length)));
    }
    // Every single byte of the size field and header, replaced by a few values, either
    // loads or is refused with a ModelError; any other exception or a crash fails.
    const std::size_t headerEnd = 8 + (good[0] | (good[1] << 8));
    int refused = 0;
    for (std::size_t at = 0; at < headerEnd; ++at)
        for (std::uint8_t value : {std::uint8_t{0}, std::uint8_t{'"'}, std::uint8_t{'9'},
                                   std::uint8_t{0xFF}, std::uint8_t{'}'}}) {
            Bytes bytes = good;
            if (bytes[at] == value) continue;
            bytes[at] = value;
            writeBytes(path, bytes);
            try {
                const auto file = SafetensorsFile::open(path);
                for (const auto& tensor : file.tensors())
                    QVERIFY(file.dataOffset() + tensor.end <= bytes.size());
            } catch (const ModelError&) {
                ++refused;
            }
        }
    QVERIFY(refused > 0);
}

void TestHostileSafetensors::refusesHostileIndex_data() {
    QTest::addColumn<QString>("weightMap");
    QTest::addColumn<bool>("sharedInBoth"); // both shards hold a tensor named "shared"
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("message");
    QTest::newRow("shard path with a slash")
        << R"({"a": "one.safetensors", "b": "sub/two.safetensors"})" << false << "weight_map.b"
        << "plain file name";
    QTest::newRow("shard path climbing out")
        << R"({"a": "one.safetensors", "b": "../two.safetensors"})" << false << "weight_map.b"
        << "plain file name";
    QTest::newRow("absolute shard path")
        << R"({"a": "one.safetensors", "b": "/etc/two.safetensors"})" << false << "weight_map.b"
        << "plain file name";
    QTest::newRow("tensor in two shards")
        << R"({"a": "one.safetensors", "b": "two.safetensors", "shared": "one.safetensors"})"
        << true << "tensor 'shared'"
        << "exactly one shard";
    QTest::newRow("index places a tensor in the wrong shard")
        << R"({"a": "one.safetensors", "b": "two.safetensors", "shared": "two.safetensors"})"
        << false << "tensor 'shared'"
        << "places it in shard two.safetensors";
    QTest::newRow("shard tensor the index does not list")
        << R"({"a": "one.safetensors", "b": "two.safetensors"})" << false << "tensor 'shared'"
        << "not listed";
    QTest::newRow("tensor missing from its shard")
        << R"({"a": "one.safetensors", "shared": "one.safetensors", "ghost": "one.safetensors"})"
        << false << "weight_map.ghost"
        << "missing from shard one.safetensors";
    QTest::newRow("shard name not a string") << R"({"a": 3})" << false << "weight_map.a"
                                             << "string";
    QTest::newRow("duplicate weight_map entry")
        << R"({"a": "one.safetensors", "a": "two.safetensors"})" << false << "json"
        << "duplicate key";
}

void TestHostileSafetensors::refusesHostileIndex() {
    QFETCH(QString, weightMap);
    QFETCH(bool, sharedInBoth);
    QFETCH(QString, field);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    const std::vector<float> values{1.0f, 2.0f};
    SafetensorsWriter one, two;
    one.addFloatTensor("a", TensorType::F32, {2}, values);
    one.addFloatTensor("shared", TensorType::F32, {2}, values);
    two.addFloatTensor("b", TensorType::F32, {2}, values);
    if (sharedInBoth) two.addFloatTensor("shared", TensorType::F32, {2}, values);
    one.write(folder / "one.safetensors");
    two.write(folder / "two.safetensors");
    writeText(folder / "model.safetensors.index.json",
              "{\"weight_map\": " + weightMap.toStdString() + "}");
    const auto error = modelErrorOf([&] { SafetensorsCheckpoint::openFolder(folder); });
    QVERIFY2(error, "the checkpoint was accepted");
    const QString what = QString::fromStdString(error->what());
    QVERIFY2(QString::fromStdString(error->field()).contains(field), qPrintable(what));
    QVERIFY2(what.contains(message), qPrintable(what));
}

void TestHostileSafetensors::refusesBadConfig_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const std::string& config, const char* field,
                  const char* message) {
        QTest::newRow(name) << QString::fromStdString(config) << field << message;
    };
    row("missing layers", configWith("num_hidden_layers", ""), "num_hidden_layers", "missing");
    row("missing vocab size", configWith("vocab_size", ""), "vocab_size", "missing");
    row("zero heads", configWith("num_attention_heads", "0"), "num_attention_heads", "zero");
    row("zero kv heads", configWith("num_key_value_heads", "0"), "num_key_value_heads",
        "positive multiple");
    row("heads not divisible by kv heads", configWith("num_key_value_heads", "3"),
        "num_key_value_heads", "positive multiple");
    row("hidden size not divisible by heads", configWith("hidden_size", "66"), "head_dim",
        "not a multiple");
    row("zero layers", configWith("num_hidden_layers", "0"), "layers", "zero");
    row("layers as a string", configWith("num_hidden_layers", "\"2\""), "num_hidden_layers",
        "integer");
    row("negative vocab", configWith("vocab_size", "-5"), "vocab_size", "integer");
    row("huge hidden size", configWith("hidden_size", "4294967296"), "hidden_size", "32-bit");
    row("unsupported model_type", configWith("model_type", "\"gpt2\""), "model_type",
        "supported: llama, mistral, qwen2, qwen3, gemma3, phi3, smollm3");
    row("unsupported architecture class", configWith("architectures", "[\"GPT2LMHeadModel\"]"),
        "architectures", "unsupported");
    row("contradicting architectures", configWith("architectures", "[\"Qwen2ForCausalLM\"]"),
        "architectures", "contradicts");
    row("unsupported RoPE scaling", configWith("rope_scaling", R"({"type": "yarn", "factor": 4})"),
        "rope_scaling", "not supported");
    row("llama3 scaling without factors",
        configWith("rope_scaling", R"({"rope_type": "llama3", "factor": 8})"), "low_freq_factor",
        "missing");
    row("negative epsilon", configWith("rms_norm_eps", "-1"), "rmsNormEps", "(0, 1)");
    row("other activation", configWith("hidden_act", "\"gelu\""), "hidden_act", "silu");
    row("not an object", "[1, 2, 3]", "", "JSON object");
}

void TestHostileSafetensors::refusesBadConfig() {
    QFETCH(QString, config);
    QFETCH(QString, field);
    QFETCH(QString, message);
    const auto error = modelErrorOf([&] {
        parseHfConfig(parseStrictJson(config.toStdString(), "config.json"), "config.json");
    });
    QVERIFY2(error, "the config was accepted");
    const QString what = QString::fromStdString(error->what());
    QCOMPARE(QString::fromStdString(error->file()), QString("config.json"));
    QVERIFY2(QString::fromStdString(error->field()).contains(field), qPrintable(what));
    QVERIFY2(what.contains(message), qPrintable(what));
}

void TestHostileSafetensors::refusesBadTokenizer_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("message");
    const std::string vocab = R"({"a": 0, "b": 1, "ab": 2, "c": 3})";
    auto row = [](const char* name, const std::string& tokenizer, const char* field,
                  const char* message) {
        QTest::newRow(name) << QString::fromStdString(tokenizer) << field << message;
    };
    row("merge references a missing token", tokenizerWith(vocab, R"(["a b", "ab x"])"),
        "model.merges[1]", "missing token 'x'");
    row("merge pair references a missing token",
        tokenizerWith(vocab, R"([["a", "b"], ["q", "c"]])"), "model.merges[1]",
        "missing token 'q'");
    row("merge result not in the vocabulary", tokenizerWith(vocab, R"(["a b", "ab c"])"),
        "model.merges[1]", "not in the vocabulary");
    row("merge without a space", tokenizerWith(vocab, R"(["ab"])"), "model.merges[0]",
        "two tokens");
    row("gap in the ids", tokenizerWith(R"({"a": 0, "b": 1, "ab": 3})", "[]"), "model.vocab.ab",
        "without gaps");
    row("gap behind a repeated added token",
        R"({"added_tokens": [{"id": 0, "content": "a", "special": true}],
            "pre_tokenizer": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": {"a": 0, "c": 2}, "merges": []}})",
        "model.vocab", "token id 1 is missing");
    row("two tokens with one id", tokenizerWith(R"({"a": 0, "b": 0})", "[]"), "model.vocab",
        "given to both");
    row("negative id", tokenizerWith(R"({"a": -1})", "[]"), "model.vocab.a", "non-negative");
    row("huge id", tokenizerWith(R"({"a": 99999999999})", "[]"), "model.vocab.a", "not below 1");
    row("not BPE", R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})", "model.type",
        "BPE only");
    row("unknown split regex", tokenizerWith(vocab, "[]", R"({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated"},
            {"type": "ByteLevel", "use_regex": false}]})"),
        "pre_tokenizer[0].pattern", "unrecognised pre-tokenizer regex");
    row("unsupported pre-tokenizer", tokenizerWith(vocab, "[]", R"({"type": "Whitespace"})"),
        "pre_tokenizer", "neither byte-level nor SentencePiece");
    row("byte-level with byte fallback",
        R"({"pre_tokenizer": {"type": "ByteLevel"},
            "model": {"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}, "merges": []}})",
        "pre_tokenizer", "mixes");
    row("added token clashes with the vocabulary",
        R"({"added_tokens": [{"id": 1, "content": "<s>", "special": true}],
            "pre_tokenizer": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})",
        "added_tokens[0].id", "given to both");
}

void TestHostileSafetensors::refusesBadTokenizer() {
    QFETCH(QString, tokenizer);
    QFETCH(QString, field);
    QFETCH(QString, message);
    const auto error = modelErrorOf([&] {
        parseHfTokenizer(parseStrictJson(tokenizer.toStdString(), "tokenizer.json"), nullptr,
                         "tokenizer.json");
    });
    QVERIFY2(error, "the tokenizer was accepted");
    const QString what = QString::fromStdString(error->what());
    QVERIFY2(QString::fromStdString(error->field()).contains(field), qPrintable(what));
    QVERIFY2(what.contains(message), qPrintable(what));
}

void TestHostileSafetensors::strictJsonRefusesDuplicatesAndDepth() {
    // Duplicates are refused at any depth, and located.
    const std::string nested = R"({"outer": {"x": 1, "y": 2, "x": 3}})";
    auto error = modelErrorOf([&] { parseStrictJson(nested, "f.json", {.baseOffset = 100}); });
    QVERIFY(error);
    QCOMPARE(*error->offset(), std::uint64_t{100 + nested.rfind("\"x\"")});
    // Equal keys in different objects are fine.
    const auto json = parseStrictJson(R"({"a": {"x": 1}, "b": {"x": 2}, "x": [{"x": 3}]})", "f");
    QCOMPARE(json["b"]["x"].get<int>(), 2);
    // Syntax errors carry the offset of the offending byte.
    error = modelErrorOf([&] { parseStrictJson(R"({"a": tru})", "f.json"); });
    QVERIFY(error);
    QVERIFY(error->offset().has_value());
    QVERIFY(*error->offset() >= 6 && *error->offset() <= 9);
    QVERIFY(modelErrorOf([&] { parseStrictJson(std::string(100, '['), "f.json"); }));
    QVERIFY(modelErrorOf([&] { parseStrictJson("", "f.json"); }));
}

QTEST_APPLESS_MAIN(TestHostileSafetensors)
#include "test_hostile_safetensors.moc"
