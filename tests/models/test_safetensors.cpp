// Safetensors round trips: every dtype this reader supports, odd shapes (scalar, empty,
// 3-D), metadata, and a sharded checkpoint read through its index.
#include "models/ModelError.hpp"
#include "models/formats/SafetensorsFile.hpp"
#include "models/formats/SafetensorsWriter.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace inferscope::models;

namespace {

std::filesystem::path tempPath(const QTemporaryDir& dir, const char* name) {
    return std::filesystem::path(dir.path().toStdString()) / name;
}

std::vector<float> ramp(std::size_t count, float start) {
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i)
        values[i] = start + 0.731f * static_cast<float>(i) - 0.013f * static_cast<float>(i * i);
    return values;
}

std::vector<float> decode(TensorType type, std::span<const std::uint8_t> bytes, std::size_t count) {
    std::vector<float> values(count);
    dequantize(type, bytes, values);
    return values;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private slots:
    void roundTripsEveryDtype_data();
    void roundTripsEveryDtype();
    void roundTripsOddShapesAndMetadata();
    void readsShardedCheckpoint();
    void singleFileCheckpoint();
};

void TestSafetensors::roundTripsEveryDtype_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("F32") << static_cast<int>(TensorType::F32);
    QTest::newRow("F16") << static_cast<int>(TensorType::F16);
    QTest::newRow("BF16") << static_cast<int>(TensorType::BF16);
}

void TestSafetensors::roundTripsEveryDtype() {
    QFETCH(int, type);
    const auto tensorType = static_cast<TensorType>(type);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto path = tempPath(dir, "model.safetensors");

    const auto matrix = ramp(6 * 5, -3.0f);
    const auto vector = ramp(7, 0.5f);
    SafetensorsWriter writer;
    writer.addFloatTensor("layer.weight", tensorType, {6, 5}, matrix);
    writer.addFloatTensor("layer.bias", tensorType, {7}, vector);
    writer.write(path);

    const SafetensorsFile file = SafetensorsFile::open(path);
    QCOMPARE(file.tensors().size(), std::size_t{2});
    QCOMPARE(file.dataOffset() % 8, std::uint64_t{0}); // header padded to 8 bytes
    const SafetensorsTensor* weight = file.find("layer.weight");
    QVERIFY(weight);
    QCOMPARE(weight->type, tensorType);
    QCOMPARE(weight->shape, (std::vector<std::uint64_t>{6, 5}));
    QCOMPARE(weight->elements(), std::uint64_t{30});
    // The stored bytes are exactly what the encoder produced, and decode to the values
    // rounded to the dtype (nearest even).
    const auto bytes = file.tensorData(*weight);
    const auto expectedBytes = encodeFloats(tensorType, matrix);
    QCOMPARE(bytes.size(), expectedBytes.size());
    QVERIFY(std::equal(bytes.begin(), bytes.end(), expectedBytes.begin()));
    const auto decoded = decode(tensorType, bytes, matrix.size());
    for (std::size_t i = 0; i < matrix.size(); ++i) {
        float rounded = matrix[i];
        if (tensorType == TensorType::F16) rounded = halfToFloat(floatToHalf(matrix[i]));
        if (tensorType == TensorType::BF16) rounded = bf16ToFloat(floatToBf16(matrix[i]));
        QCOMPARE(decoded[i], rounded);
        const float tolerance = tensorType == TensorType::F32   ? 0.0f
                                : tensorType == TensorType::F16 ? 1e-3f
                                                                : 8e-3f;
        QVERIFY(std::fabs(decoded[i] - matrix[i]) <= tolerance * std::fabs(matrix[i]));
    }
    const SafetensorsTensor* bias = file.find("layer.bias");
    QVERIFY(bias);
    QCOMPARE(bias->shape, (std::vector<std::uint64_t>{7}));
    QCOMPARE(bias->fileOffset, file.dataOffset() + bias->begin);
    QCOMPARE(file.tensorData(*bias).size(), tensorBytes(tensorType, 7).value());
    QVERIFY(!file.find("missing"));
}

void TestSafetensors::roundTripsOddShapesAndMetadata() {
    QTemporaryDir dir;
    const auto path = tempPath(dir, "odd.safetensors");
    SafetensorsWriter writer;
    writer.setMetadata("format", "pt");
    writer.setMetadata("note", "a \"quoted\" value");
    const float scalar = 42.5f;
    writer.addFloatTensor("scalar", TensorType::F32, {}, std::span(&scalar, 1));
    writer.addFloatTensor("empty", TensorType::F16, {0, 4}, std::span<const float>());
    const auto cube = ramp(2 * 3 * 4, 1.0f);
    writer.addFloatTensor("cube", TensorType::BF16, {2, 3, 4}, cube);
    writer.write(path);

    const auto file = SafetensorsFile::open(path);
    QCOMPARE(file.metadata().size(), std::size_t{2});
    QCOMPARE(file.metadata().at("note"), std::string("a \"quoted\" value"));
    const auto* scalarTensor = file.find("scalar");
    QVERIFY(scalarTensor);
    QVERIFY(scalarTensor->shape.empty());
    QCOMPARE(scalarTensor->elements(), std::uint64_t{1});
    QCOMPARE(decode(TensorType::F32, file.tensorData(*scalarTensor), 1)[0], scalar);
    const auto* empty = file.find("empty");
    QVERIFY(empty);
    QCOMPARE(empty->elements(), std::uint64_t{0});
    QCOMPARE(empty->end, empty->begin);
    const auto* cubeTensor = file.find("cube");
    QVERIFY(cubeTensor);
    QCOMPARE(cubeTensor->shape, (std::vector<std::uint64_t>{2, 3, 4}));
    const auto decoded = decode(TensorType::BF16, file.tensorData(*cubeTensor), cube.size());
    for (std::size_t i = 0; i < cube.size(); ++i)
        QCOMPARE(decoded[i], bf16ToFloat(floatToBf16(cube[i])));
    // Tensors are listed in data order and tile the data section.
    std::uint64_t end = 0;
    for (const auto& tensor : file.tensors()) {
        QCOMPARE(tensor.begin, end);
        end = tensor.end;
    }
    QCOMPARE(file.dataOffset() + end, file.fileBytes());

    // The writer refuses what the reader would refuse.
    SafetensorsWriter bad;
    bad.addFloatTensor("a", TensorType::F32, {1}, std::span(&scalar, 1));
    QVERIFY_THROWS_EXCEPTION(ModelError,
                             bad.addFloatTensor("a", TensorType::F32, {1}, std::span(&scalar, 1)));
    QVERIFY_THROWS_EXCEPTION(
        ModelError, bad.addTensor("b", TensorType::F32, {2}, std::vector<std::uint8_t>(4)));
    QVERIFY_THROWS_EXCEPTION(
        ModelError, bad.addTensor("c", TensorType::Q8_0, {32}, std::vector<std::uint8_t>(34)));
}

void TestSafetensors::readsShardedCheckpoint() {
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    const auto first = ramp(12, 0.0f), second = ramp(8, 5.0f), third = ramp(3, -1.0f);
    SafetensorsWriter shardOne, shardTwo;
    shardOne.addFloatTensor("a.weight", TensorType::F32, {3, 4}, first);
    shardOne.addFloatTensor("b.weight", TensorType::BF16, {8}, second);
    shardTwo.addFloatTensor("c.weight", TensorType::F16, {3}, third);
    shardOne.write(folder / "model-00001-of-00002.safetensors");
    shardTwo.write(folder / "model-00002-of-00002.safetensors");
    writeText(folder / "model.safetensors.index.json", R"({
  "metadata": {"total_size": 62},
  "weight_map": {
    "a.weight": "model-00001-of-00002.safetensors",
    "b.weight": "model-00001-of-00002.safetensors",
    "c.weight": "model-00002-of-00002.safetensors"
  }
})");

    const auto checkpoint = SafetensorsCheckpoint::openFolder(folder);
    QCOMPARE(checkpoint.files().size(), std::size_t{2});
    QCOMPARE(checkpoint.tensors().size(), std::size_t{3});
    const auto* a = checkpoint.find("a.weight");
    const auto* c = checkpoint.find("c.weight");
    QVERIFY(a && c);
    QCOMPARE(a->file->path().filename().string(), std::string("model-00001-of-00002.safetensors"));
    QCOMPARE(c->file->path().filename().string(), std::string("model-00002-of-00002.safetensors"));
    QCOMPARE(decode(TensorType::F32, checkpoint.tensorData(*a), 12), first);
    const auto thirdDecoded = decode(TensorType::F16, checkpoint.tensorData(*c), 3);
    for (std::size_t i = 0; i < 3; ++i)
        QCOMPARE(thirdDecoded[i], halfToFloat(floatToHalf(third[i])));
    std::uint64_t expectedBytes =
        std::filesystem::file_size(folder / "model.safetensors.index.json");
    for (const auto& file : checkpoint.files()) expectedBytes += file->fileBytes();
    QCOMPARE(checkpoint.totalBytes(), expectedBytes);

    // Copies share the mapped shards; entries stay valid.
    const SafetensorsCheckpoint copy = checkpoint;
    QCOMPARE(decode(TensorType::F32, copy.tensorData(*copy.find("a.weight")), 12), first);
}

void TestSafetensors::singleFileCheckpoint() {
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    QVERIFY_THROWS_EXCEPTION(ModelError, SafetensorsCheckpoint::openFolder(folder));
    const auto values = ramp(4, 2.0f);
    SafetensorsWriter writer;
    writer.addFloatTensor("only", TensorType::F32, {4}, values);
    writer.write(folder / "model.safetensors");
    const auto checkpoint = SafetensorsCheckpoint::openFolder(folder);
    QCOMPARE(checkpoint.tensors().size(), std::size_t{1});
    QCOMPARE(checkpoint.totalBytes(), std::filesystem::file_size(folder / "model.safetensors"));
    QCOMPARE(decode(TensorType::F32, checkpoint.tensorData(*checkpoint.find("only")), 4), values);
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
