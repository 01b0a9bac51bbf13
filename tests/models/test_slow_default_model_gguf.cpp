// The default model (SmolLM2-135M-Instruct, Q4_1 GGUF) read by our GGUF reader: its
// configuration, tokenizer metadata and tensors, and dequantized values against the ones
// the `gguf` Python package produced (tests/data/gguf-fixtures.json).
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"

#include "tests/DefaultModel.hpp"
#include <QElapsedTimer>
#include <QtTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace inferscope::models;

class TestSlowDefaultModelGguf : public QObject {
    Q_OBJECT

    std::optional<LoadedModel> model_;
    nlohmann::json fixture_;

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        QElapsedTimer timer;
        timer.start();
        model_ = loadGgufModel(path);
        qInfo("loaded %s in %lld ms", path.string().c_str(),
              static_cast<long long>(timer.elapsed()));
        std::ifstream in(INFERSCOPE_TEST_DATA "/gguf-fixtures.json");
        QVERIFY2(in, "tests/data/gguf-fixtures.json is missing");
        fixture_ = nlohmann::json::parse(in).at("model");
    }

    void configuration() {
        const ModelConfig& config = model_->config;
        QCOMPARE(config.architecture, std::string("llama"));
        QCOMPARE(config.layers, 30u);
        QCOMPARE(config.hiddenSize, 576u);
        QCOMPARE(config.heads, 9u);
        QCOMPARE(config.kvHeads, 3u);
        QCOMPARE(config.headDim, 64u);
        QCOMPARE(config.ffnSize, 1536u);
        QCOMPARE(config.vocabSize, 49152u);
        QCOMPARE(config.contextLength, 8192u);
        QCOMPARE(config.ropeTheta, 100000.0f);
        QCOMPARE(config.rmsNormEps, 1e-5f);
        QVERIFY(config.tiedEmbeddings);
        QVERIFY(!config.qkvBias);
        QCOMPARE(config.ropePairing, RopePairing::Adjacent);
        QCOMPARE(config.ropeScaling.type, RopeScalingType::None);
        QCOMPARE(config.queryGroupSize(), 3u);
        QCOMPARE(config.kvBytesPerToken(), 23040ull); // 2 x 30 x 3 x 64 x 2
        QCOMPARE(config.name, std::string("Smollm2 135M 8k Lc100K Mix1 Ep2"));
        QCOMPARE(model_->format, ModelFormat::Gguf);
        QCOMPARE(model_->fileBytes, fixture_.at("fileBytes").get<std::uint64_t>());
    }

    void tokenizerMetadata() {
        const TokenizerData& tokenizer = model_->tokenizer;
        QCOMPARE(tokenizer.kind, TokenizerKind::ByteLevelBpe);
        QCOMPARE(tokenizer.preTokenizer, std::string("smollm"));
        QCOMPARE(tokenizer.tokens.size(), std::size_t{49152});
        QCOMPARE(tokenizer.tokens[1], std::string("<|im_start|>"));
        QCOMPARE(tokenizer.tokenTypes.size(), std::size_t{49152});
        QCOMPARE(tokenizer.tokenTypes[2], TokenType::Control);
        QCOMPARE(tokenizer.merges.size(), std::size_t{48900});
        QCOMPARE(tokenizer.merges[0], std::string("\xC4\xA0 t")); // "Ġ t"
        QCOMPARE(tokenizer.bosId.value(), 1);
        QCOMPARE(tokenizer.eosId.value(), 2);
        QCOMPARE(tokenizer.unknownId.value(), 0);
        QCOMPARE(tokenizer.paddingId.value(), 2);
        QVERIFY(!tokenizer.addBos);
        QVERIFY(!tokenizer.addSpacePrefix);
        QVERIFY(tokenizer.chatTemplate.find("<|im_start|>") != std::string::npos);
    }

    void tensors() {
        const WeightStore& weights = model_->weights;
        QCOMPARE(weights.tensors().size(), fixture_.at("tensorCount").get<std::size_t>());
        const auto bytesByType = weights.bytesByType();
        QVERIFY(bytesByType.contains(TensorType::Q4_1));
        QVERIFY(bytesByType.contains(TensorType::F32));
        QVERIFY(bytesByType.contains(TensorType::Q8_0));
        QCOMPARE(bytesByType.size(), fixture_.at("types").size());
        QCOMPARE(weights.at("token_embd.weight").type, TensorType::Q8_0);
        QCOMPARE(weights.at("blk.0.attn_q.weight").type, TensorType::Q4_1);
        QCOMPARE(weights.at("blk.29.ffn_down.weight").shape,
                 (std::vector<std::uint64_t>{1536, 576}));
        QVERIFY(!weights.contains("output.weight"));
        std::uint64_t stored = 0;
        for (const auto& [type, bytes] : bytesByType) stored += bytes;
        QVERIFY(stored < model_->fileBytes && stored > model_->fileBytes * 9 / 10);
        qInfo("%llu parameters, %llu bytes of tensor data",
              static_cast<unsigned long long>(weights.totalElements()),
              static_cast<unsigned long long>(stored));
    }

    void embeddingsAreFinite() {
        QElapsedTimer timer;
        timer.start();
        const std::vector<float> embeddings = model_->weights.dequantized("token_embd.weight");
        qInfo("dequantized token_embd.weight (%zu values) in %lld ms", embeddings.size(),
              static_cast<long long>(timer.elapsed()));
        QCOMPARE(embeddings.size(), std::size_t{576} * 49152);
        std::size_t nonFinite = 0;
        double sumSquares = 0;
        for (float value : embeddings) {
            if (!std::isfinite(value)) ++nonFinite;
            sumSquares += double{value} * value;
        }
        QCOMPARE(nonFinite, std::size_t{0});
        QVERIFY(sumSquares > 0);
    }

    void matchesPythonGgufPackage() {
        for (const auto& expected : fixture_.at("tensors")) {
            const std::string name = expected.at("name");
            const StoredTensor& tensor = model_->weights.at(name);
            QCOMPARE(std::string(tensorTypeName(tensor.type)),
                     expected.at("type").get<std::string>());
            QCOMPARE(tensor.shape, expected.at("shape").get<std::vector<std::uint64_t>>());
            const std::vector<float> values = model_->weights.dequantized(name);
            const auto first8 = expected.at("first8").get<std::vector<double>>();
            for (std::size_t i = 0; i < first8.size(); ++i)
                QVERIFY2(double{values[i]} == first8[i],
                         qPrintable(QString("%1[%2] = %3, python %4")
                                        .arg(name.c_str())
                                        .arg(i)
                                        .arg(values[i], 0, 'g', 9)
                                        .arg(first8[i], 0, 'g', 9)));
            const std::size_t row = expected.at("row");
            const std::size_t cols = tensor.cols();
            double sum = 0;
            for (std::size_t c = 0; c < cols; ++c) sum += values[row * cols + c];
            const double pythonSum = expected.at("rowSum");
            // Same float32 values; only the order of the float64 additions differs.
            QVERIFY2(std::fabs(sum - pythonSum) <= 1e-9 * std::max(1.0, std::fabs(pythonSum)),
                     qPrintable(QString("%1 row %2 sum %3, python %4")
                                    .arg(name.c_str())
                                    .arg(row)
                                    .arg(sum, 0, 'g', 17)
                                    .arg(pythonSum, 0, 'g', 17)));
        }
    }
};

QTEST_APPLESS_MAIN(TestSlowDefaultModelGguf)
#include "test_slow_default_model_gguf.moc"
