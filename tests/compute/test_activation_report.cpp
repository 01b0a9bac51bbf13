// Activation outliers and level counts (compute/experiments/quantization/ActivationReport.hpp): on
// a recording with planted outlier dimensions the report finds exactly them, and the level counts
// are what the arithmetic says; then the same through the CPU reference transformer with outliers
// planted in the embedding.
#include "compute/experiments/quantization/ActivationReport.hpp"
#include "models/LoadedModel.hpp"
#include "models/synthetic/SyntheticModel.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <random>
#include <set>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

namespace {

constexpr std::uint32_t kLayers = 3, kPositions = 200, kHidden = 64;
constexpr std::uint32_t kLargeDim = 5, kSecondDim = 40;

// Typical dimensions sweep evenly through [-a, a] over the positions (each dimension in its
// own order), with a = 1 for dimension 0 and a in [0.3, 0.95) for the rest; dimension 5 is
// +20 and dimension 40 is -15 at every position and layer.
ResidualRecording plantedRecording() {
    ResidualRecording r;
    r.layers = kLayers;
    r.positions = kPositions;
    r.hidden = kHidden;
    r.values.resize(std::size_t(kLayers) * kPositions * kHidden);
    std::mt19937 generator(4);
    for (std::uint32_t d = 0; d < kHidden; ++d) {
        std::vector<std::uint32_t> order(kPositions);
        for (std::uint32_t p = 0; p < kPositions; ++p) order[p] = p;
        std::shuffle(order.begin(), order.end(), generator);
        const float amplitude = d == 0 ? 1.0f : 0.3f + 0.65f * float(d) / float(kHidden);
        for (std::uint32_t l = 0; l < kLayers; ++l)
            for (std::uint32_t p = 0; p < kPositions; ++p) {
                float v = amplitude * (-1.0f + 2.0f * float(order[p]) / float(kPositions - 1));
                if (d == kLargeDim) v = 20.0f;
                if (d == kSecondDim) v = -15.0f;
                r.values[(std::size_t(l) * kPositions + p) * kHidden + d] = v;
            }
    }
    return r;
}

std::int64_t integer(const Table& t, std::size_t row, const char* column) {
    return std::get<std::int64_t>(t.at(row, column));
}

const Table& table(const std::vector<Table>& tables, const std::string& id) {
    for (const auto& t : tables)
        if (t.id == id) return t;
    throw std::runtime_error("no table " + id);
}

} // namespace

class TestActivationReport : public QObject {
    Q_OBJECT
private slots:
    void distinctLevelArithmetic() {
        // A dimension sweeping [-1, 1] against an outlier 20x larger: scale 20/127, so it
        // reaches round(127/20) = 6 steps each side: 13 levels, about 256/20.
        std::vector<float> sweep;
        for (int i = 0; i <= 1000; ++i) sweep.push_back(-1.0f + 2.0f * float(i) / 1000.0f);
        QCOMPARE(distinctLevels(sweep, 20.0f / 127, 127), 13u);
        QCOMPARE(distinctLevels(sweep, 1.0f / 127, 127), 255u);
        QCOMPARE(distinctLevels(sweep, 20.0f / 7, 7), 1u); // INT4: the whole dimension is 0
        QCOMPARE(distinctLevels(sweep, 1.0f / 7, 7), 15u);
        QCOMPARE(distinctLevels(sweep, 0.0f, 127), 1u);
        QCOMPARE(distinctLevels({}, 1.0f, 127), 0u);
    }

    void findsThePlantedDimensionsAndCountsLevels() {
        const auto tables = activationReport(plantedRecording(), {2u, 2u});
        QCOMPARE(tables.size(), std::size_t(5));

        const Table& layers = table(tables, "activation-layers");
        QCOMPARE(layers.rows.size(), std::size_t(kLayers));
        for (std::size_t l = 0; l < kLayers; ++l) {
            QCOMPARE(integer(layers, l, "top dimension"), std::int64_t(kLargeDim));
            QCOMPARE(layers.number(l, "max |h|"), 20.0);
            QCOMPARE(std::get<std::string>(layers.at(l, "top 2 dimensions")), std::string("5, 40"));
        }

        const Table& top = table(tables, "activation-top-dims");
        QCOMPARE(top.rows.size(), std::size_t(2)); // no other dimension is ever in a top 2
        QCOMPARE(integer(top, 0, "dimension"), std::int64_t(kLargeDim));
        QCOMPARE(integer(top, 1, "dimension"), std::int64_t(kSecondDim));
        QCOMPARE(top.number(1, "max |h| here"), 15.0);
        for (std::size_t r = 0; r < 2; ++r) {
            QCOMPARE(integer(top, r, "layers in top 2"), std::int64_t(kLayers));
            QCOMPARE(integer(top, r, "of layers"), std::int64_t(kLayers));
        }

        // Histogram at layer 2: 61 typical maxima below 1, dimension 0's exactly 1 in [1, 2),
        // 15 in [8, 16), 20 in [16, 32), which is the last bin.
        const Table& histogram = table(tables, "activation-histogram");
        QCOMPARE(histogram.rows.size(), std::size_t(6)); // 0-1 1-2 2-4 4-8 8-16 16-32
        const std::int64_t expected[] = {61, 1, 0, 0, 1, 1};
        for (std::size_t b = 0; b < 6; ++b) {
            QCOMPARE(integer(histogram, b, "dimensions"), expected[b]);
            QCOMPARE(std::get<std::string>(histogram.at(b, "bar")).size(),
                     std::size_t(std::min<std::int64_t>(expected[b], 40)));
        }
        QCOMPARE(integer(histogram, 5, "from"), std::int64_t(16));
        QCOMPARE(integer(histogram, 5, "to"), std::int64_t(32));

        // Tensor-wide INT8: scale 20/127. Typical values reach at most 6 steps (13 levels),
        // +20 is level 127, -15 is level round(-95.25) = -95: 15 levels. Without the top 2,
        // scale 1/127 and every level is used; the ratio of the scales is 20.
        const Table& levels = table(tables, "activation-levels");
        QCOMPARE(levels.rows.size(), std::size_t(4));
        QCOMPARE(std::get<std::string>(levels.at(0, "format")), std::string("INT8"));
        QVERIFY(std::fabs(levels.number(0, "scale") - 20.0 / 127) < 1e-6);
        QCOMPARE(integer(levels, 0, "levels used"), std::int64_t(15));
        QCOMPARE(integer(levels, 0, "of"), std::int64_t(256));
        QVERIFY(std::fabs(levels.number(1, "scale") - 1.0 / 127) < 1e-7);
        // Levels beyond +-120 are reached only by dimension 0, whose 200 values sit 1.28
        // steps apart, so a few of the outermost are skipped; everything inside is used.
        QVERIFY(integer(levels, 1, "levels used") >= 245);
        QVERIFY(integer(levels, 1, "levels used") <= 255);
        QVERIFY(std::fabs(levels.number(1, "scale ratio") - 20.0) < 1e-4);
        // INT4: scale 20/7, typical values all round to 0; +20 -> 7, -15 -> round(-5.25) = -5.
        QCOMPARE(std::get<std::string>(levels.at(2, "format")), std::string("INT4"));
        QCOMPARE(integer(levels, 2, "levels used"), std::int64_t(3));
        QCOMPARE(integer(levels, 2, "of"), std::int64_t(16));
        QCOMPARE(integer(levels, 3, "levels used"), std::int64_t(15));

        // Per dimension: the top two get one level each under the tensor scale and are not
        // quantized with the smaller one; typical dimensions use at most 13 levels with the
        // tensor scale (2 round(a 127/20) + 1 for amplitude a) and over ten times as many with
        // the top 2 excluded (scale 1/127: their 200 values spread over 2 a 127 steps).
        const Table& perDim = table(tables, "activation-levels-per-dim");
        QCOMPARE(perDim.rows.size(), std::size_t(2 + 3));
        QCOMPARE(integer(perDim, 0, "dimension"), std::int64_t(kLargeDim));
        QCOMPARE(integer(perDim, 0, "INT8 levels, tensor scale"), std::int64_t(1));
        QVERIFY(std::holds_alternative<std::monostate>(perDim.at(0, "INT8 levels, top excluded")));
        for (std::size_t r = 2; r < perDim.rows.size(); ++r) {
            const double amplitude = perDim.number(r, "max |h|");
            const auto tensorLevels = integer(perDim, r, "INT8 levels, tensor scale");
            const auto expectedTensor = 2 * std::int64_t(std::nearbyint(amplitude * 127 / 20)) + 1;
            QCOMPARE(tensorLevels, expectedTensor);
            QVERIFY(tensorLevels <= 13);
            QCOMPARE(integer(perDim, r, "INT4 levels, tensor scale"), std::int64_t(1));
            const auto keptLevels = integer(perDim, r, "INT8 levels, top excluded");
            QVERIFY(keptLevels > 10 * tensorLevels);
        }
        QCOMPARE(std::get<std::string>(perDim.at(3, "which")), std::string("median"));
    }

    void rejectsBadOptions() {
        const auto recording = plantedRecording();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationReport(recording, {3u, 4u}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationReport(recording, {0u, 0u}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationReport(recording, {0u, kHidden}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationReport(ResidualRecording{}, {}));
        // Default layer: 2/3 of the way up (the chapter's 16 of 24).
        const auto tables = activationReport(recording);
        QVERIFY(table(tables, "activation-histogram").title.find("Layer 2") == 0);
    }

    void recordsTheReferenceTransformersResidualStream() {
        // A tiny random llama with two dimensions planted large in the embedding: the residual
        // stream carries them through both layers, and the report finds exactly those two.
        models::ModelConfig c;
        c.architecture = "llama";
        c.name = "planted";
        c.layers = 2;
        c.hiddenSize = 64;
        c.heads = 4;
        c.kvHeads = 2;
        c.headDim = 16;
        c.ffnSize = 96;
        c.vocabSize = 50;
        c.contextLength = 64;
        c.tiedEmbeddings = true;
        std::mt19937 generator(2);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        auto random = [&](std::size_t n, float sigma) {
            std::vector<float> v(n);
            for (auto& x : v) x = sigma * normal(generator);
            return v;
        };
        const std::set<std::uint32_t> planted = {7, 33};
        models::ReferenceWeights w;
        auto embedding = random(std::size_t(c.vocabSize) * c.hiddenSize, 1.0f);
        for (std::size_t token = 0; token < c.vocabSize; ++token)
            for (auto d : planted) embedding[token * c.hiddenSize + d] = 30.0f;
        w["token_embd.weight"] = embedding;
        w["output_norm.weight"] = std::vector<float>(c.hiddenSize, 1.0f);
        const std::size_t h = c.hiddenSize, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
        for (std::uint32_t l = 0; l < c.layers; ++l) {
            const std::string p = "blk." + std::to_string(l) + ".";
            w[p + "attn_norm.weight"] = std::vector<float>(h, 1.0f);
            w[p + "ffn_norm.weight"] = std::vector<float>(h, 1.0f);
            w[p + "attn_q.weight"] = random(q * h, 0.05f);
            w[p + "attn_k.weight"] = random(kv * h, 0.05f);
            w[p + "attn_v.weight"] = random(kv * h, 0.05f);
            w[p + "attn_output.weight"] = random(h * q, 0.05f);
            w[p + "ffn_gate.weight"] = random(c.ffnSize * h, 0.05f);
            w[p + "ffn_up.weight"] = random(c.ffnSize * h, 0.05f);
            w[p + "ffn_down.weight"] = random(h * c.ffnSize, 0.05f);
        }
        models::ReferenceTransformer transformer(c, std::move(w), 1);
        const std::vector<std::int32_t> tokens = {1, 5, 9, 12, 3, 44, 20, 7, 8, 30, 2, 19};
        const auto recording = recordResidualStream(transformer, tokens);
        QCOMPARE(recording.layers, 2u);
        QCOMPARE(recording.positions, std::uint32_t(tokens.size()));
        QCOMPARE(recording.hidden, 64u);
        // The observer saw every (layer, position): no slot is left at its initial zero.
        for (std::uint32_t l = 0; l < 2; ++l)
            for (std::uint32_t p = 0; p < tokens.size(); ++p) {
                const auto v = recording.at(l, p);
                QVERIFY(std::any_of(v.begin(), v.end(), [](float x) { return x != 0.0f; }));
            }
        const auto tables = activationReport(recording, {1u, 2u});
        const Table& top = table(tables, "activation-top-dims");
        std::set<std::int64_t> found;
        for (std::size_t r = 0; r < top.rows.size(); ++r)
            if (!std::holds_alternative<std::monostate>(top.at(r, "rank")))
                found.insert(integer(top, r, "dimension"));
        QCOMPARE(found, (std::set<std::int64_t>{7, 33}));
        for (std::size_t r = 0; r < 2; ++r)
            QCOMPARE(integer(top, r, "layers in top 2"), std::int64_t(2));
        // The planted dimensions dominate: the typical dimension gets few INT8 levels.
        const Table& perDim = table(tables, "activation-levels-per-dim");
        QVERIFY(integer(perDim, 3, "INT8 levels, tensor scale") <
                integer(perDim, 3, "INT8 levels, top excluded"));
        // The transformer's observer was removed again: a second forward records nothing new.
        auto cache = transformer.newCache();
        transformer.forward(tokens, cache);
    }

    void findsTheOutliersPlantedInASyntheticGgufFile() {
        // The synthetic-model writer plants dimensions 20x larger in every layer's residual
        // stream; written to a real GGUF file and loaded back, the report finds exactly them
        // in every layer's top 3.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 3;
        spec.hiddenSize = 96;
        spec.outlierDims = {3, 50, 77};
        const auto file = std::filesystem::path(dir.path().toStdString()) / "planted.gguf";
        models::writeSyntheticGguf(spec, file);
        const auto model = models::loadModel(file);
        models::ReferenceTransformer transformer(model.config, models::dequantizeAll(model.weights),
                                                 1);
        std::vector<std::int32_t> tokens;
        for (std::int32_t t = 0; t < 24; ++t)
            tokens.push_back((t * 37 + 11) % std::int32_t(spec.vocabSize));
        const auto tables = activationReport(recordResidualStream(transformer, tokens), {1u, 3u});
        const Table& top = table(tables, "activation-top-dims");
        QCOMPARE(top.rows.size(), std::size_t(3)); // no other dimension is in any layer's top 3
        std::set<std::int64_t> found;
        for (std::size_t r = 0; r < top.rows.size(); ++r) {
            found.insert(integer(top, r, "dimension"));
            QCOMPARE(integer(top, r, "layers in top 3"), std::int64_t(3));
        }
        QCOMPARE(found, (std::set<std::int64_t>{3, 50, 77}));
        // Excluding them shrinks the scale by about the planted factor. With INT4 and the
        // tensor-wide scale (absmax / 7, over 6) every typical dimension (max |h| < 3) rounds
        // to the single level 0; without the outliers they get several.
        const Table& levels = table(tables, "activation-levels");
        QVERIFY(levels.number(1, "scale ratio") > 5);
        const Table& perDim = table(tables, "activation-levels-per-dim");
        QCOMPARE(perDim.rows.size(), std::size_t(3 + 3));
        for (std::size_t r = 3; r < perDim.rows.size(); ++r) {
            QVERIFY(perDim.number(r, "max |h|") < levels.number(2, "scale") / 2);
            QCOMPARE(integer(perDim, r, "INT4 levels, tensor scale"), std::int64_t(1));
            QVERIFY(integer(perDim, r, "INT4 levels, top excluded") >= 5);
            QVERIFY(integer(perDim, r, "INT8 levels, top excluded") >
                    2 * integer(perDim, r, "INT8 levels, tensor scale"));
        }
    }
};

QTEST_APPLESS_MAIN(TestActivationReport)
#include "test_activation_report.moc"
