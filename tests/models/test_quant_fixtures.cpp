// What llama.cpp's own quantizer writes (tests/data/quant-fixtures.json, written by
// scripts/make-quant-fixtures.py with llama-cpp-python's bundled llama.cpp):
// - two blocks of every type its presets write, taken from files it quantized, with the
//   values gguf-py (llama.cpp's Python package, an implementation independent of ours)
//   dequantizes them to: our host decoder must give the same floats bit for bit;
// - the type of every matrix in its Q3_K_M / Q4_K_M / Q5_K_M / Q6_K files of the default
//   model, and its Q3_K_M / Q4_K_M / Q5_K_M mixes on Qwen2.5-0.5B's shape: models/quant/
//   LlamaQuantMix must pick the same type for every one.
#include "models/formats/TensorType.hpp"
#include "models/quant/LlamaQuantMix.hpp"

#include <QtTest>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace inferscope::models;

namespace {

std::optional<TensorType> typeNamed(const std::string& name) {
    for (auto type : supportedTensorTypes())
        if (tensorTypeName(type) == name) return type;
    return std::nullopt;
}

std::vector<std::uint8_t> fromHex(const std::string& hex) {
    std::vector<std::uint8_t> bytes(hex.size() / 2);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    return bytes;
}

} // namespace

class TestQuantFixtures : public QObject {
    Q_OBJECT
    nlohmann::json fixture_;

    // Every matrix type of one file against the preset's rules.
    static void
    checkMix(const std::string& presetName, const QuantMixModel& model,
             const std::vector<std::tuple<std::string, std::string, std::uint64_t>>& tensors) {
        const auto preset = parseQuantPreset(presetName);
        QVERIFY2(preset.has_value(), presetName.c_str());
        std::size_t checked = 0;
        for (const auto& [name, typeName, cols] : tensors) {
            const auto expected = typeNamed(typeName);
            QVERIFY2(expected.has_value(), (name + ": " + typeName).c_str());
            const auto ours = presetTensorType(*preset, name, cols, model);
            if (ours != *expected)
                QFAIL(qPrintable(QString::fromStdString(presetName + " " + name + ": llama.cpp " +
                                                        typeName + ", ours " +
                                                        std::string(tensorTypeName(ours)))));
            ++checked;
        }
        QVERIFY(checked > 0);
    }

private slots:
    void initTestCase() {
        std::ifstream in(INFERSCOPE_TEST_DATA "/quant-fixtures.json");
        QVERIFY2(in, "tests/data/quant-fixtures.json is missing");
        fixture_ = nlohmann::json::parse(in);
    }

    void llamaCppBlocksDequantizeAsGgufPy() {
        std::set<std::string> seen;
        for (const auto& block : fixture_.at("blocks")) {
            const std::string name = block.at("type");
            const auto type = typeNamed(name);
            QVERIFY2(type.has_value(), name.c_str());
            const auto bytes = fromHex(block.at("hex"));
            const auto expected = block.at("values").get<std::vector<float>>();
            QCOMPARE(std::uint64_t(bytes.size()), tensorBytes(*type, expected.size()).value());
            std::vector<float> out(expected.size());
            dequantize(*type, bytes, out);
            for (std::size_t i = 0; i < expected.size(); ++i)
                if (out[i] != expected[i])
                    QFAIL(qPrintable(QString("%1 (%2) [%3]: ours %4, gguf-py %5")
                                         .arg(name.c_str())
                                         .arg(block.at("tensor").get<std::string>().c_str())
                                         .arg(i)
                                         .arg(out[i], 0, 'g', 9)
                                         .arg(expected[i], 0, 'g', 9)));
            seen.insert(name);
        }
        // Every block type of the presets the issue lists.
        for (const char* type : {"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "Q4_0",
                                 "Q4_1", "Q5_0", "Q5_1", "Q8_0"})
            QVERIFY2(seen.count(type), type);
    }

    // The default model (SmolLM2-135M: 30 layers, 9 query and 3 KV heads, rows of 576 and
    // 1,536, tied embeddings) as llama.cpp requantized it.
    void presetMixesOnTheDefaultModel() {
        const QuantMixModel model{30, 9, 3, true};
        for (const auto& [preset, file] : fixture_.at("files").items()) {
            std::vector<std::tuple<std::string, std::string, std::uint64_t>> tensors;
            for (const auto& [name, type] : file.at("tensorTypes").items())
                tensors.emplace_back(name, type.get<std::string>(),
                                     name.find("ffn_down") != std::string::npos ? 1536 : 576);
            checkMix(preset, model, tensors);
            if (QTest::currentTestFailed()) return;
        }
    }

    void presetMixesOnQwenShape() {
        const auto& mixes = fixture_.at("qwenShapeMixes");
        if (mixes.at("presets").empty())
            QSKIP("the fixture was written with --skip-qwen: no Qwen2.5-0.5B-shape mixes");
        const auto& m = mixes.at("model");
        const QuantMixModel model{m.at("layers").get<std::uint32_t>(),
                                  m.at("heads").get<std::uint32_t>(),
                                  m.at("kvHeads").get<std::uint32_t>(), m.at("tied").get<bool>()};
        for (const auto& [preset, list] : mixes.at("presets").items()) {
            std::vector<std::tuple<std::string, std::string, std::uint64_t>> tensors;
            for (const auto& entry : list)
                tensors.emplace_back(entry.at(0).get<std::string>(), entry.at(1).get<std::string>(),
                                     entry.at(2).get<std::uint64_t>());
            checkMix(preset, model, tensors);
            if (QTest::currentTestFailed()) return;
        }
    }

    void presetNames() {
        for (auto preset : allQuantPresets()) {
            const std::string name(quantPresetName(preset));
            QCOMPARE(parseQuantPreset(name), std::optional(preset));
            std::string upper = name;
            for (auto& ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
            QCOMPARE(parseQuantPreset(upper), std::optional(preset));
        }
        QVERIFY(!parseQuantPreset("q4_k_x"));
        QCOMPARE(quantPresetFileType(QuantPreset::Q4_K_M), 15u);
    }
};

QTEST_APPLESS_MAIN(TestQuantFixtures)
#include "test_quant_fixtures.moc"
