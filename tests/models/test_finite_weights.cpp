// The load-time scan for NaN/Inf weights: plain float tensors element by element, block
// formats through their f16 scales; loaders refuse such files naming the tensor.
#include "TinyGgufModel.hpp"
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/formats/FiniteWeights.hpp"
#include "models/formats/SafetensorsFile.hpp"
#include "models/formats/SafetensorsWriter.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

using namespace inferscope::models;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

StoredTensor tensorOf(TensorType type, const std::vector<std::uint8_t>& bytes) {
    StoredTensor tensor;
    tensor.name = "t";
    tensor.type = type;
    tensor.data = bytes;
    return tensor;
}

std::vector<std::uint8_t> floatBytes(const std::vector<float>& values) {
    std::vector<std::uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// n blocks of a block format, all zero (finite), with one f16 written at byte `at`.
std::vector<std::uint8_t> blocksWith(TensorType type, std::size_t blocks, std::size_t at,
                                     float value) {
    std::vector<std::uint8_t> bytes(blocks * tensorTypeTraits(type).blockBytes, 0);
    const std::uint16_t half = floatToHalf(value);
    std::memcpy(bytes.data() + at, &half, 2);
    return bytes;
}

std::string refusal(const std::function<void()>& load) {
    try {
        load();
    } catch (const ModelError& error) {
        return error.what();
    }
    return "accepted";
}

} // namespace

class TestFiniteWeights : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void floatTensorsAreCheckedElementByElement() {
        const auto good = floatBytes({1.0f, -2.0f, 0.0f, 3e38f});
        QVERIFY(!findNonFinite(tensorOf(TensorType::F32, good)));
        const auto nan = floatBytes({1.0f, 2.0f, kNaN});
        const auto found = findNonFinite(tensorOf(TensorType::F32, nan));
        QVERIFY(found);
        QCOMPARE(found->byteOffset, std::uint64_t{8});
        QCOMPARE(QString::fromStdString(found->what), QString("element 2 is NaN"));
        QCOMPARE(QString::fromStdString(
                     findNonFinite(tensorOf(TensorType::F32, floatBytes({-kInf})))->what),
                 QString("element 0 is -Inf"));

        std::vector<std::uint8_t> halves(8, 0);
        QVERIFY(!findNonFinite(tensorOf(TensorType::F16, halves)));
        const std::uint16_t inf = floatToHalf(kInf);
        std::memcpy(halves.data() + 6, &inf, 2);
        QCOMPARE(QString::fromStdString(findNonFinite(tensorOf(TensorType::F16, halves))->what),
                 QString("element 3 is +Inf"));
        std::vector<std::uint8_t> brain(4, 0);
        const std::uint16_t bnan = floatToBf16(kNaN);
        std::memcpy(brain.data(), &bnan, 2);
        QCOMPARE(findNonFinite(tensorOf(TensorType::BF16, brain))->byteOffset, std::uint64_t{0});
    }

    // Where each block format keeps its scales (ggml's layouts): a non-finite scale is found,
    // and the same bytes elsewhere in the block (quants) are not mistaken for one.
    void blockFormatsAreCheckedThroughTheirScales() {
        struct Layout {
            TensorType type;
            std::size_t scaleAt;
            std::size_t quantAt;
        };
        for (const Layout& l :
             {Layout{TensorType::Q8_0, 0, 10}, Layout{TensorType::Q4_0, 0, 4},
              Layout{TensorType::Q4_1, 2, 6}, Layout{TensorType::Q4_K, 2, 20},
              Layout{TensorType::Q5_K, 0, 40}, Layout{TensorType::Q6_K, 208, 100}}) {
            const auto blockBytes = tensorTypeTraits(l.type).blockBytes;
            const auto bad = findNonFinite(
                tensorOf(l.type, blocksWith(l.type, 3, blockBytes + l.scaleAt, kNaN)));
            QVERIFY2(bad.has_value(), tensorTypeName(l.type).data());
            QCOMPARE(bad->byteOffset, std::uint64_t{blockBytes + l.scaleAt});
            QVERIFY(bad->what.starts_with("block 1's"));
            QVERIFY2(!findNonFinite(tensorOf(l.type, blocksWith(l.type, 3, l.quantAt, kNaN))),
                     tensorTypeName(l.type).data());
            // And dequantizing agrees: the scanned block really gives non-finite values.
            const auto bytes = blocksWith(l.type, 1, l.scaleAt, kInf);
            std::vector<float> values(tensorTypeTraits(l.type).blockElements);
            std::vector<std::uint8_t> withQuants = bytes;
            for (std::size_t i = 0; i < withQuants.size(); ++i)
                if (i != l.scaleAt && i != l.scaleAt + 1) withQuants[i] = 0x11;
            dequantize(l.type, withQuants, values);
            QVERIFY(std::any_of(values.begin(), values.end(),
                                [](float v) { return !std::isfinite(v); }));
        }
    }

    void loadersRefuseNonFiniteWeightsNamingTheTensor() {
        const float nan = kNaN;
        GgufWriter clean = tiny::writer();
        const auto cleanFile = dir_.filePath("clean.gguf").toStdString();
        clean.write(cleanFile);
        QCOMPARE(loadGgufModel(cleanFile).config.layers, 1u);

        // Patch the data of blk.0.ffn_up.weight in the file to NaN.
        auto bytes = clean.bytes();
        const GgufFile parsed = GgufFile::open(cleanFile);
        const auto& info =
            *std::find_if(parsed.tensorInfos().begin(), parsed.tensorInfos().end(),
                          [](const auto& t) { return t.name == "blk.0.ffn_up.weight"; });
        const std::uint64_t at = parsed.dataOffset() + info.offset + 4 * 5;
        std::memcpy(bytes.data() + at, &nan, 4);
        const auto badFile = tiny::writeBytes(dir_.path().toStdString(), "nan.gguf", bytes);
        const std::string gguf = refusal([&] { loadGgufModel(badFile); });
        QVERIFY2(gguf.find(badFile.string() + ": blk.0.ffn_up.weight (at byte " +
                           std::to_string(at) + "): element 5 is NaN") == 0,
                 gguf.c_str());

        // A safetensors folder whose embedding is all +Inf.
        SyntheticModelSpec synthetic;
        synthetic.layers = 1;
        const std::filesystem::path folder = dir_.filePath("hf").toStdString();
        writeSyntheticSafetensors(synthetic, folder);
        QCOMPARE(loadSafetensorsModel(folder).config.layers, 1u);
        const SafetensorsFile file = SafetensorsFile::open(folder / "model.safetensors");
        const SafetensorsTensor* embedding = file.find("model.embed_tokens.weight");
        QVERIFY(embedding);
        std::fstream patch(folder / "model.safetensors",
                           std::ios::in | std::ios::out | std::ios::binary);
        const float inf = kInf;
        patch.seekp(static_cast<std::streamoff>(embedding->fileOffset));
        patch.write(reinterpret_cast<const char*>(&inf), 4);
        patch.close();
        const std::string hf = refusal([&] { loadSafetensorsModel(folder); });
        QVERIFY2(hf.find("model.embed_tokens.weight") != std::string::npos &&
                     hf.find("element 0 is +Inf") != std::string::npos,
                 hf.c_str());
    }
};

QTEST_APPLESS_MAIN(TestFiniteWeights)
#include "test_finite_weights.moc"
