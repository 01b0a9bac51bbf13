// Synthetic models written as GGUF and as an HF safetensors folder: the two load to the
// same model (configs equal but for RoPE pairing, weights bit for bit, Q/K after undoing
// GGUF's row permutation), writing is deterministic, the planted outlier dimensions stand
// out in every layer's residual stream, and loadModel dispatches both formats.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "models/tokenizer/Tokenizer.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

using namespace inferscope::models;

namespace {

struct WrittenModel {
    std::filesystem::path gguf;
    std::filesystem::path folder;
};

// The folder is named as the GGUF's general.name, so even the names agree.
WrittenModel writeBoth(const SyntheticModelSpec& spec, const QTemporaryDir& dir,
                       const std::string& tag = "") {
    const std::filesystem::path root = dir.path().toStdString();
    WrittenModel written{root / (tag + "model.gguf"),
                         root / tag / ("synthetic-" + spec.architecture)};
    writeSyntheticGguf(spec, written.gguf);
    writeSyntheticSafetensors(spec, written.folder);
    return written;
}

std::vector<std::uint8_t> fileBytes(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

bool isQueryOrKey(const std::string& name) {
    return name.find("attn_q.") != std::string::npos || name.find("attn_k.") != std::string::npos;
}

// Undoes GGUF llama's Q/K row order: file row 2i + side holds HF row i + side * d/2.
std::vector<std::uint8_t> unpermuteRows(const StoredTensor& tensor, std::uint32_t headDim) {
    const std::uint64_t rows = tensor.shape.size() == 2 ? tensor.shape[1] : tensor.shape[0];
    const std::uint64_t rowBytes = tensor.data.size() / rows;
    std::vector<std::uint8_t> out(tensor.data.size());
    const std::uint32_t half = headDim / 2;
    for (std::uint64_t head = 0; head < rows / headDim; ++head)
        for (std::uint32_t i = 0; i < half; ++i)
            for (std::uint32_t side = 0; side < 2; ++side) {
                const std::uint64_t fileRow = head * headDim + 2 * i + side;
                const std::uint64_t hfRow = head * headDim + i + side * half;
                std::copy_n(tensor.data.begin() + static_cast<std::ptrdiff_t>(fileRow * rowBytes),
                            rowBytes, out.begin() + static_cast<std::ptrdiff_t>(hfRow * rowBytes));
            }
    return out;
}

std::vector<float> unpermuteValues(const std::vector<float>& values, std::uint64_t rows,
                                   std::uint32_t headDim) {
    StoredTensor view;
    view.shape = {values.size() / rows, rows};
    view.data = {reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * 4};
    const auto bytes = unpermuteRows(view, headDim);
    std::vector<float> out(values.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

// --- A small, plain CPU forward pass, to look at the residual stream -----------------

struct Residuals {
    // [point][position][dim]: point 0 is the embedding, point l + 1 follows layer l.
    std::vector<std::vector<std::vector<float>>> values;
};

Residuals residualStream(const LoadedModel& model, const std::vector<std::int32_t>& tokens) {
    const ModelConfig& c = model.config;
    auto weight = [&](const std::string& name) { return model.weights.dequantized(name); };
    auto matVec = [](const std::vector<float>& matrix, const std::vector<float>& x,
                     std::size_t rows) {
        std::vector<float> out(rows, 0.0f);
        const std::size_t cols = x.size();
        for (std::size_t r = 0; r < rows; ++r) {
            double sum = 0.0;
            for (std::size_t k = 0; k < cols; ++k) sum += double(matrix[r * cols + k]) * x[k];
            out[r] = static_cast<float>(sum);
        }
        return out;
    };
    auto rmsNorm = [&](const std::vector<float>& x, const std::vector<float>& gain) {
        double squares = 0.0;
        for (float v : x) squares += double(v) * v;
        const float inverse =
            1.0f / std::sqrt(static_cast<float>(squares / x.size()) + c.rmsNormEps);
        std::vector<float> out(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inverse * gain[i];
        return out;
    };
    auto rope = [&](std::vector<float>& x, std::uint32_t heads, std::uint32_t position) {
        const std::uint32_t half = c.headDim / 2;
        for (std::uint32_t h = 0; h < heads; ++h)
            for (std::uint32_t i = 0; i < half; ++i) {
                const double angle =
                    position * std::pow(double(c.ropeTheta), -2.0 * i / double(c.headDim));
                const std::size_t a =
                    h * c.headDim + (c.ropePairing == RopePairing::Adjacent ? 2 * i : i);
                const std::size_t b = a + (c.ropePairing == RopePairing::Adjacent ? 1 : half);
                const float x0 = x[a], x1 = x[b];
                x[a] = static_cast<float>(x0 * std::cos(angle) - x1 * std::sin(angle));
                x[b] = static_cast<float>(x0 * std::sin(angle) + x1 * std::cos(angle));
            }
    };

    const std::size_t hidden = c.hiddenSize, qWidth = c.heads * c.headDim,
                      kvWidth = c.kvHeads * c.headDim;
    const auto embedding = weight("token_embd.weight");
    Residuals result;
    std::vector<std::vector<float>> h;
    for (std::int32_t token : tokens)
        h.emplace_back(embedding.begin() + token * hidden,
                       embedding.begin() + (token + 1) * hidden);
    result.values.push_back(h);
    for (std::uint32_t layer = 0; layer < c.layers; ++layer) {
        const std::string block = "blk." + std::to_string(layer) + ".";
        const auto attnNorm = weight(block + "attn_norm.weight"),
                   ffnNorm = weight(block + "ffn_norm.weight");
        const auto wq = weight(block + "attn_q.weight"), wk = weight(block + "attn_k.weight"),
                   wv = weight(block + "attn_v.weight"), wo = weight(block + "attn_output.weight");
        const auto wGate = weight(block + "ffn_gate.weight"), wUp = weight(block + "ffn_up.weight"),
                   wDown = weight(block + "ffn_down.weight");
        std::vector<std::vector<float>> keys, values;
        for (std::uint32_t t = 0; t < tokens.size(); ++t) {
            const auto x = rmsNorm(h[t], attnNorm);
            auto q = matVec(wq, x, qWidth), k = matVec(wk, x, kvWidth), v = matVec(wv, x, kvWidth);
            if (c.qkvBias) {
                const auto bq = weight(block + "attn_q.bias"), bk = weight(block + "attn_k.bias"),
                           bv = weight(block + "attn_v.bias");
                for (std::size_t i = 0; i < qWidth; ++i) q[i] += bq[i];
                for (std::size_t i = 0; i < kvWidth; ++i) k[i] += bk[i], v[i] += bv[i];
            }
            rope(q, c.heads, t);
            rope(k, c.kvHeads, t);
            keys.push_back(k);
            values.push_back(v);
            std::vector<float> attended(qWidth, 0.0f);
            for (std::uint32_t head = 0; head < c.heads; ++head) {
                const std::uint32_t kvHead = head / c.queryGroupSize();
                std::vector<double> scores(t + 1);
                for (std::uint32_t s = 0; s <= t; ++s) {
                    double dot = 0.0;
                    for (std::uint32_t d = 0; d < c.headDim; ++d)
                        dot += double(q[head * c.headDim + d]) * keys[s][kvHead * c.headDim + d];
                    scores[s] = dot / std::sqrt(double(c.headDim));
                }
                const double top = *std::max_element(scores.begin(), scores.end());
                double total = 0.0;
                for (double& score : scores) total += (score = std::exp(score - top));
                for (std::uint32_t s = 0; s <= t; ++s)
                    for (std::uint32_t d = 0; d < c.headDim; ++d)
                        attended[head * c.headDim + d] += static_cast<float>(
                            scores[s] / total * values[s][kvHead * c.headDim + d]);
            }
            const auto attentionOut = matVec(wo, attended, hidden);
            for (std::size_t i = 0; i < hidden; ++i) h[t][i] += attentionOut[i];
            const auto y = rmsNorm(h[t], ffnNorm);
            const auto gate = matVec(wGate, y, c.ffnSize), up = matVec(wUp, y, c.ffnSize);
            std::vector<float> activated(c.ffnSize);
            for (std::size_t i = 0; i < c.ffnSize; ++i)
                activated[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
            const auto down = matVec(wDown, activated, hidden);
            for (std::size_t i = 0; i < hidden; ++i) h[t][i] += down[i];
        }
        result.values.push_back(h);
    }
    return result;
}

std::vector<std::int32_t> sampleTokens(std::uint32_t vocab, std::size_t count) {
    std::vector<std::int32_t> tokens;
    for (std::size_t i = 0; i < count; ++i)
        tokens.push_back(static_cast<std::int32_t>((i * 37 + 11) % (vocab - 3)));
    return tokens;
}

} // namespace

class TestSyntheticModel : public QObject {
    Q_OBJECT
private slots:
    void configsAgreeButForPairing_data();
    void configsAgreeButForPairing();
    void tokenizersAgreeAndWork();
    void weightsAgreeBitForBit_data();
    void weightsAgreeBitForBit();
    void quantizedGgufStaysCloseToTheWeights_data();
    void quantizedGgufStaysCloseToTheWeights();
    void writingIsDeterministic();
    void outliersStandOutInEveryLayer_data();
    void outliersStandOutInEveryLayer();
    void loadModelDispatchesBothFormats();
    void largeVocabularyIsConsistent();
    void refusesImpossibleSpecs();
};

void TestSyntheticModel::configsAgreeButForPairing_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<bool>("tied");
    QTest::newRow("llama, tied") << "llama" << true;
    QTest::newRow("llama, separate head") << "llama" << false;
    QTest::newRow("qwen2") << "qwen2" << true;
}

void TestSyntheticModel::configsAgreeButForPairing() {
    QFETCH(QString, architecture);
    QFETCH(bool, tied);
    SyntheticModelSpec spec;
    spec.architecture = architecture.toStdString();
    spec.tiedEmbeddings = tied;
    spec.ropeTheta = 50000.0f;
    spec.rmsNormEps = 1e-6f;
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const LoadedModel gguf = loadModel(written.gguf);
    const LoadedModel safetensors = loadModel(written.folder);
    const ModelConfig expected = syntheticConfig(spec);
    for (const ModelConfig* config : {&gguf.config, &safetensors.config}) {
        QCOMPARE(config->architecture, expected.architecture);
        QCOMPARE(config->name, expected.name);
        QCOMPARE(config->layers, expected.layers);
        QCOMPARE(config->hiddenSize, expected.hiddenSize);
        QCOMPARE(config->heads, expected.heads);
        QCOMPARE(config->kvHeads, expected.kvHeads);
        QCOMPARE(config->headDim, expected.headDim);
        QCOMPARE(config->ffnSize, expected.ffnSize);
        QCOMPARE(config->vocabSize, expected.vocabSize);
        QCOMPARE(config->contextLength, expected.contextLength);
        QCOMPARE(config->ropeTheta, expected.ropeTheta);
        QCOMPARE(config->rmsNormEps, expected.rmsNormEps);
        QCOMPARE(config->ropeScaling.type, RopeScalingType::None);
        QCOMPARE(config->tiedEmbeddings, tied);
        QCOMPARE(config->qkvBias, spec.architecture == "qwen2");
    }
    QCOMPARE(gguf.config.ropePairing, expected.ropePairing);
    QCOMPARE(gguf.config.ropePairing,
             spec.architecture == "llama" ? RopePairing::Adjacent : RopePairing::SplitHalf);
    QCOMPARE(safetensors.config.ropePairing, RopePairing::SplitHalf);
}

void TestSyntheticModel::tokenizersAgreeAndWork() {
    SyntheticModelSpec spec;
    spec.vocabSize = 400;
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const auto gguf = loadModel(written.gguf).tokenizer;
    const auto safetensors = loadModel(written.folder).tokenizer;
    QCOMPARE(gguf.kind, TokenizerKind::ByteLevelBpe);
    QCOMPARE(safetensors.kind, TokenizerKind::ByteLevelBpe);
    QCOMPARE(gguf.tokens, safetensors.tokens);
    QCOMPARE(gguf.tokens.size(), std::size_t{400});
    QCOMPARE(gguf.tokenTypes, safetensors.tokenTypes);
    QCOMPARE(gguf.merges, safetensors.merges);
    QCOMPARE(gguf.preTokenizer, std::string("gpt-2"));
    QCOMPARE(safetensors.preTokenizer, std::string("gpt-2"));
    QCOMPARE(gguf.bosId, safetensors.bosId);
    QCOMPARE(gguf.eosId, safetensors.eosId);
    QCOMPARE(gguf.addBos, safetensors.addBos);
    QCOMPARE(gguf.addEos, safetensors.addEos);
    QCOMPARE(gguf.chatTemplate, safetensors.chatTemplate);
    QVERIFY(gguf.chatTemplate.find("<|im_start|>") != std::string::npos);
    // 256 byte tokens in GPT-2's mapping ("Ġ" is the space byte), then merges, then
    // the three control tokens.
    QCOMPARE(gguf.tokens[' '], std::string("Ġ"));
    QCOMPARE(gguf.tokens['a'], std::string("a"));
    QCOMPARE(gguf.tokens[397], std::string("<|endoftext|>"));
    QCOMPARE(gguf.tokens[398], std::string("<|im_start|>"));
    QCOMPARE(gguf.tokens[399], std::string("<|im_end|>"));
    QCOMPARE(gguf.tokenTypes[398], TokenType::Control);
    QCOMPARE(gguf.tokenTypes[300], TokenType::Normal);
    QCOMPARE(gguf.bosId, std::optional<std::int32_t>(398));
    QCOMPARE(gguf.eosId, std::optional<std::int32_t>(399));
    QVERIFY(std::find(gguf.tokens.begin(), gguf.tokens.end(), "Ġthe") != gguf.tokens.end());

    // It tokenizes: English text takes fewer tokens than bytes and round-trips; the
    // control tokens are matched whole.
    const Tokenizer tokenizer(safetensors);
    const std::string text =
        "The keeper of the lighthouse wrote in his log that the weather is changing.";
    const auto ids = tokenizer.encode(text, false, true);
    QVERIFY2(ids.size() * 2 < text.size(), qPrintable(QString("%1 tokens").arg(ids.size())));
    QCOMPARE(tokenizer.decode(ids), text);
    const auto chat = tokenizer.encode("<|im_start|>user\nhi<|im_end|>", false, true);
    QCOMPARE(chat.front(), 398);
    QCOMPARE(chat.back(), 399);
    QCOMPARE(Tokenizer(gguf).encode(text, false, true), ids);
}

void TestSyntheticModel::weightsAgreeBitForBit_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("type");
    QTest::addColumn<bool>("tied");
    QTest::newRow("llama F32") << "llama" << static_cast<int>(TensorType::F32) << true;
    QTest::newRow("llama F16, separate head")
        << "llama" << static_cast<int>(TensorType::F16) << false;
    QTest::newRow("llama BF16") << "llama" << static_cast<int>(TensorType::BF16) << true;
    QTest::newRow("qwen2 F32") << "qwen2" << static_cast<int>(TensorType::F32) << true;
    QTest::newRow("qwen2 BF16, separate head")
        << "qwen2" << static_cast<int>(TensorType::BF16) << false;
}

void TestSyntheticModel::weightsAgreeBitForBit() {
    QFETCH(QString, architecture);
    QFETCH(int, type);
    QFETCH(bool, tied);
    SyntheticModelSpec spec;
    spec.architecture = architecture.toStdString();
    spec.weightType = static_cast<TensorType>(type);
    spec.tiedEmbeddings = tied;
    spec.layers = 3;
    spec.outlierDims = {5, 40};
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const LoadedModel gguf = loadGgufModel(written.gguf);
    const LoadedModel safetensors = loadSafetensorsModel(written.folder);

    std::set<std::string> ggufNames, safetensorsNames;
    for (const auto& [name, tensor] : gguf.weights.tensors()) ggufNames.insert(name);
    for (const auto& [name, tensor] : safetensors.weights.tensors()) safetensorsNames.insert(name);
    QCOMPARE(ggufNames, safetensorsNames);
    QCOMPARE(ggufNames.contains("output.weight"), !tied);
    QCOMPARE(ggufNames.contains("blk.2.attn_q.bias"), spec.architecture == "qwen2");
    const std::size_t expectedCount =
        2 + (tied ? 0 : 1) + spec.layers * (9 + (spec.architecture == "qwen2" ? 3 : 0));
    QCOMPARE(ggufNames.size(), expectedCount);

    int permuted = 0;
    for (const auto& [name, stored] : safetensors.weights.tensors()) {
        const StoredTensor& fromGguf = gguf.weights.at(name);
        QCOMPARE(fromGguf.shape, stored.shape);
        QCOMPARE(fromGguf.type, stored.type);
        QCOMPARE(stored.type, stored.shape.size() == 2 ? spec.weightType : TensorType::F32);
        QCOMPARE(fromGguf.data.size(), stored.data.size());
        const bool undo = spec.architecture == "llama" && isQueryOrKey(name);
        const std::vector<std::uint8_t> ggufBytes =
            undo ? unpermuteRows(fromGguf, spec.headDim)
                 : std::vector<std::uint8_t>(fromGguf.data.begin(), fromGguf.data.end());
        QVERIFY2(std::equal(ggufBytes.begin(), ggufBytes.end(), stored.data.begin()),
                 qPrintable(QString::fromStdString(name)));
        if (undo) {
            // The permutation is real: the raw rows differ.
            QVERIFY(!std::equal(fromGguf.data.begin(), fromGguf.data.end(), stored.data.begin()));
            ++permuted;
        }
    }
    QCOMPARE(permuted, spec.architecture == "llama" ? int(2 * spec.layers) : 0);
}

void TestSyntheticModel::quantizedGgufStaysCloseToTheWeights_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("Q8_0") << static_cast<int>(TensorType::Q8_0);
    QTest::newRow("Q4_0") << static_cast<int>(TensorType::Q4_0);
    QTest::newRow("Q4_1") << static_cast<int>(TensorType::Q4_1);
}

void TestSyntheticModel::quantizedGgufStaysCloseToTheWeights() {
    QFETCH(int, type);
    const auto quantType = static_cast<TensorType>(type);
    SyntheticModelSpec spec;
    spec.outlierDims = {7};
    spec.weightType = quantType;
    QTemporaryDir dir;
    writeSyntheticGguf(spec, std::filesystem::path(dir.path().toStdString()) / "q.gguf");
    const LoadedModel quantized =
        loadModel(std::filesystem::path(dir.path().toStdString()) / "q.gguf");
    spec.weightType = TensorType::F32;
    writeSyntheticSafetensors(spec, std::filesystem::path(dir.path().toStdString()) / "f32");
    const LoadedModel exact = loadModel(std::filesystem::path(dir.path().toStdString()) / "f32");

    // Per 32-value block, the error bound of each format: half a step from rounding (a
    // whole step at Q4_0's clamped top level), plus the f16 rounding of scale and minimum.
    const double halfPrecision = std::ldexp(1.0, -11);
    int matrices = 0;
    for (const auto& [name, stored] : exact.weights.tensors()) {
        const StoredTensor& file = quantized.weights.at(name);
        if (stored.shape.size() != 2) {
            QCOMPARE(file.type, TensorType::F32);
            continue;
        }
        QCOMPARE(file.type, quantType);
        ++matrices;
        const auto reference = exact.weights.dequantized(name);
        auto values = quantized.weights.dequantized(name);
        if (isQueryOrKey(name)) values = unpermuteValues(values, stored.shape[1], spec.headDim);
        for (std::size_t block = 0; block < reference.size() / 32; ++block) {
            const auto begin = reference.begin() + block * 32;
            const auto [low, high] = std::minmax_element(begin, begin + 32);
            const double absMax = std::max(std::fabs(*low), std::fabs(*high));
            double bound = 0.0;
            if (quantType == TensorType::Q8_0) bound = absMax / 127 * (0.5 + 127 * halfPrecision);
            if (quantType == TensorType::Q4_0) bound = absMax / 8 * (1.0 + 8 * halfPrecision);
            if (quantType == TensorType::Q4_1)
                bound = (*high - *low) / 15 * (0.5 + 15 * halfPrecision) + absMax * halfPrecision;
            for (std::size_t i = 0; i < 32; ++i) {
                const double error = std::fabs(values[block * 32 + i] - reference[block * 32 + i]);
                if (error > bound * 1.0001 + 1e-12)
                    QFAIL(qPrintable(QString("%1 block %2: error %3 above bound %4")
                                         .arg(QString::fromStdString(name))
                                         .arg(block)
                                         .arg(error)
                                         .arg(bound)));
            }
        }
    }
    QCOMPARE(matrices, 1 + 7 * int(spec.layers));
}

void TestSyntheticModel::writingIsDeterministic() {
    SyntheticModelSpec spec;
    spec.outlierDims = {1, 2};
    spec.qkvBias = false;
    QTemporaryDir dir;
    const auto first = writeBoth(spec, dir, "a");
    const auto second = writeBoth(spec, dir, "b");
    QCOMPARE(fileBytes(first.gguf), fileBytes(second.gguf));
    for (const char* name :
         {"model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"})
        QVERIFY2(fileBytes(first.folder / name) == fileBytes(second.folder / name), name);
    // Another seed gives other weights (and only the weights change).
    spec.seed = 2;
    const auto third = writeBoth(spec, dir, "c");
    QVERIFY(fileBytes(first.gguf) != fileBytes(third.gguf));
    QCOMPARE(fileBytes(first.gguf).size(), fileBytes(third.gguf).size());
    QVERIFY(fileBytes(first.folder / "model.safetensors") !=
            fileBytes(third.folder / "model.safetensors"));
    QVERIFY(fileBytes(first.folder / "tokenizer.json") ==
            fileBytes(third.folder / "tokenizer.json"));
}

void TestSyntheticModel::outliersStandOutInEveryLayer_data() {
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<float>("scale");
    QTest::newRow("llama, x20") << "llama" << 20.0f;
    QTest::newRow("qwen2, x8") << "qwen2" << 8.0f;
}

void TestSyntheticModel::outliersStandOutInEveryLayer() {
    QFETCH(QString, architecture);
    QFETCH(float, scale);
    SyntheticModelSpec spec;
    spec.architecture = architecture.toStdString();
    spec.layers = 4;
    spec.outlierDims = {3, 17, 50};
    spec.outlierScale = scale;
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const LoadedModel gguf = loadModel(written.gguf);
    const LoadedModel safetensors = loadModel(written.folder);
    const auto tokens = sampleTokens(spec.vocabSize, 10);
    const Residuals split = residualStream(safetensors, tokens);
    const Residuals adjacent = residualStream(gguf, tokens);
    QCOMPARE(split.values.size(), std::size_t{spec.layers + 1});

    const std::set<std::uint32_t> outliers(spec.outlierDims.begin(), spec.outlierDims.end());
    for (std::size_t point = 0; point < split.values.size(); ++point) {
        // Max |h| per dimension over the positions.
        std::vector<float> maxAbs(spec.hiddenSize, 0.0f);
        float largestDifference = 0.0f, largest = 0.0f;
        for (std::size_t t = 0; t < tokens.size(); ++t)
            for (std::uint32_t d = 0; d < spec.hiddenSize; ++d) {
                const float value = split.values[point][t][d];
                maxAbs[d] = std::max(maxAbs[d], std::fabs(value));
                largest = std::max(largest, std::fabs(value));
                largestDifference =
                    std::max(largestDifference, std::fabs(value - adjacent.values[point][t][d]));
            }
        // GGUF's permuted rows with adjacent pairs compute the same model as HF's rows
        // with split-half pairs (up to summation order).
        QVERIFY2(
            largestDifference <= 1e-4f * largest,
            qPrintable(
                QString("layer point %1: formats differ by %2").arg(point).arg(largestDifference)));
        std::vector<float> ordinary;
        for (std::uint32_t d = 0; d < spec.hiddenSize; ++d)
            if (!outliers.contains(d)) ordinary.push_back(maxAbs[d]);
        std::sort(ordinary.begin(), ordinary.end());
        const float median = ordinary[ordinary.size() / 2];
        const float ordinaryMax = ordinary.back();
        for (std::uint32_t dim : outliers) {
            const QString where =
                QString("layer point %1, dim %2: max|h| %3, ordinary median %4, max %5")
                    .arg(point)
                    .arg(dim)
                    .arg(maxAbs[dim])
                    .arg(median)
                    .arg(ordinaryMax);
            QVERIFY2(maxAbs[dim] >= 0.4f * scale * median, qPrintable(where));
            QVERIFY2(maxAbs[dim] > 1.5f * ordinaryMax, qPrintable(where));
        }
        if (point == split.values.size() - 1)
            qInfo("last layer: outlier max|h| %g %g %g vs ordinary median %g (ratio %.1f)",
                  maxAbs[3], maxAbs[17], maxAbs[50], median,
                  std::min({maxAbs[3], maxAbs[17], maxAbs[50]}) / median);
    }

    // Without planted dimensions nothing stands out that far.
    spec.outlierDims.clear();
    QTemporaryDir plainDir;
    const auto plain = writeBoth(spec, plainDir);
    const Residuals none = residualStream(loadModel(plain.folder), tokens);
    std::vector<float> maxAbs(spec.hiddenSize, 0.0f);
    for (const auto& position : none.values.back())
        for (std::uint32_t d = 0; d < spec.hiddenSize; ++d)
            maxAbs[d] = std::max(maxAbs[d], std::fabs(position[d]));
    std::vector<float> sorted = maxAbs;
    std::sort(sorted.begin(), sorted.end());
    QVERIFY(sorted.back() < 0.4f * scale * sorted[sorted.size() / 2]);
}

void TestSyntheticModel::loadModelDispatchesBothFormats() {
    SyntheticModelSpec spec;
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const auto gguf = loadModel(written.gguf);
    QCOMPARE(gguf.format, ModelFormat::Gguf);
    QCOMPARE(gguf.fileBytes, std::filesystem::file_size(written.gguf));
    const auto folder = loadModel(written.folder);
    QCOMPARE(folder.format, ModelFormat::Safetensors);
    QCOMPARE(folder.path, written.folder);
    QVERIFY(folder.fileBytes > std::filesystem::file_size(written.folder / "model.safetensors"));
    // A file of the folder stands for the folder.
    QCOMPARE(loadModel(written.folder / "model.safetensors").format, ModelFormat::Safetensors);
    QCOMPARE(loadModel(written.folder / "config.json").format, ModelFormat::Safetensors);
}

void TestSyntheticModel::largeVocabularyIsConsistent() {
    SyntheticModelSpec spec;
    spec.vocabSize = 5000; // beyond what the training text yields: extended merges
    spec.hiddenSize = 32;
    spec.heads = 2;
    spec.kvHeads = 1;
    spec.ffnSize = 64;
    spec.layers = 1;
    QTemporaryDir dir;
    const auto written = writeBoth(spec, dir);
    const auto model = loadModel(written.folder); // checks every merge against the vocabulary
    const auto& tokens = model.tokenizer.tokens;
    QCOMPARE(tokens.size(), std::size_t{5000});
    QCOMPARE(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size());
    QCOMPARE(model.tokenizer.merges.size() + 256 + 3, tokens.size());
    QCOMPARE(loadModel(written.gguf).tokenizer.tokens, tokens);
    const Tokenizer tokenizer(model.tokenizer);
    const std::string text = "the thing that was there";
    QCOMPARE(tokenizer.decode(tokenizer.encode(text, false, true)), text);
}

void TestSyntheticModel::refusesImpossibleSpecs() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    SyntheticModelSpec spec;
    spec.outlierDims = {64};
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticGguf(spec, root / "a.gguf"));
    spec = {};
    spec.vocabSize = 258;
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticGguf(spec, root / "b.gguf"));
    spec = {};
    spec.architecture = "gpt2";
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticSafetensors(spec, root / "c"));
    spec = {};
    spec.weightType = TensorType::Q8_0;
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticSafetensors(spec, root / "d"));
    spec.ffnSize = 100; // not whole Q8_0 blocks
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticGguf(spec, root / "e.gguf"));
    spec = {};
    spec.qkvBias = true; // an HF llama config cannot say "q/k/v biases only"
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticSafetensors(spec, root / "f"));
    writeSyntheticGguf(spec, root / "f.gguf");
    QVERIFY(loadModel(root / "f.gguf").config.qkvBias);
    spec = {};
    spec.kvHeads = 3; // 4 heads are not a multiple of 3
    QVERIFY_THROWS_EXCEPTION(ModelError, writeSyntheticGguf(spec, root / "g.gguf"));
}

QTEST_APPLESS_MAIN(TestSyntheticModel)
#include "test_synthetic_model.moc"
