// The CPU reference transformer on tiny hand-built weights: one forward pass against the
// equations evaluated step by step here (in double), RoPE for both pairings, the GQA head
// mapping, tied vs separate output heads, RoPE scaling rules, and cached == uncached.
#include "models/ModelError.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include <QtTest>

#include <cmath>
#include <numbers>
#include <random>

using namespace inferscope::models;

namespace {

using Matrix = std::vector<double>; // row-major [rows][cols]
using Vector = std::vector<double>;

// Small, varied, exactly representable weights: (k*step mod 11 - 5) / 10.
std::vector<float> pattern(std::size_t n, std::size_t step, std::size_t offset = 0) {
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i)
        values[i] = float(int((i * step + offset) % 11) - 5) / 10.0f;
    return values;
}

std::vector<float> randomValues(std::size_t n, std::mt19937& rng, float scale) {
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> values(n);
    for (float& v : values) v = dist(rng);
    return values;
}

Vector matVec(const std::vector<float>& w, const Vector& x) {
    const std::size_t cols = x.size();
    Vector y(w.size() / cols, 0.0);
    for (std::size_t r = 0; r < y.size(); ++r)
        for (std::size_t c = 0; c < cols; ++c) y[r] += double(w[r * cols + c]) * x[c];
    return y;
}

Vector rmsNorm(const Vector& x, const std::vector<float>& w, double eps) {
    double meanSquare = 0.0;
    for (double v : x) meanSquare += v * v;
    meanSquare /= double(x.size());
    Vector y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(meanSquare + eps) * w[i];
    return y;
}

ModelConfig tinyConfig() {
    ModelConfig config;
    config.architecture = "llama";
    config.name = "tiny";
    config.layers = 1;
    config.hiddenSize = 4;
    config.heads = 2;
    config.kvHeads = 1;
    config.headDim = 2;
    config.ffnSize = 3;
    config.vocabSize = 5;
    config.contextLength = 64;
    config.ropeTheta = 10000.0f;
    config.rmsNormEps = 1e-5f;
    config.tiedEmbeddings = false;
    return config;
}

ReferenceWeights tinyWeights(const ModelConfig& c) {
    const std::size_t h = c.hiddenSize, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
    ReferenceWeights w;
    w["token_embd.weight"] = pattern(c.vocabSize * h, 3, 1);
    w["output_norm.weight"] = {1.0f, 0.5f, 1.5f, 1.0f};
    w["output.weight"] = pattern(c.vocabSize * h, 7, 2);
    w["blk.0.attn_norm.weight"] = {1.0f, 1.5f, 0.5f, 2.0f};
    w["blk.0.attn_q.weight"] = pattern(q * h, 5, 0);
    w["blk.0.attn_k.weight"] = pattern(kv * h, 4, 3);
    w["blk.0.attn_v.weight"] = pattern(kv * h, 9, 1);
    w["blk.0.attn_output.weight"] = pattern(h * q, 2, 5);
    w["blk.0.ffn_norm.weight"] = {0.5f, 1.0f, 1.0f, 1.5f};
    w["blk.0.ffn_gate.weight"] = pattern(c.ffnSize * h, 6, 4);
    w["blk.0.ffn_up.weight"] = pattern(c.ffnSize * h, 8, 2);
    w["blk.0.ffn_down.weight"] = pattern(h * c.ffnSize, 3, 7);
    return w;
}

// Random weights for a model of any shape (deterministic in the seed).
ReferenceWeights randomWeights(const ModelConfig& c, unsigned seed) {
    std::mt19937 rng(seed);
    const std::size_t h = c.hiddenSize, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
    ReferenceWeights w;
    w["token_embd.weight"] = randomValues(c.vocabSize * h, rng, 1.0f);
    w["output_norm.weight"] = randomValues(h, rng, 1.0f);
    if (!c.tiedEmbeddings) w["output.weight"] = randomValues(c.vocabSize * h, rng, 0.5f);
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        w[p + "attn_norm.weight"] = randomValues(h, rng, 1.0f);
        w[p + "attn_q.weight"] = randomValues(q * h, rng, 0.5f);
        w[p + "attn_k.weight"] = randomValues(kv * h, rng, 0.5f);
        w[p + "attn_v.weight"] = randomValues(kv * h, rng, 0.5f);
        if (c.qkvBias) {
            w[p + "attn_q.bias"] = randomValues(q, rng, 0.2f);
            w[p + "attn_k.bias"] = randomValues(kv, rng, 0.2f);
            w[p + "attn_v.bias"] = randomValues(kv, rng, 0.2f);
        }
        w[p + "attn_output.weight"] = randomValues(h * q, rng, 0.5f);
        w[p + "ffn_norm.weight"] = randomValues(h, rng, 1.0f);
        w[p + "ffn_gate.weight"] = randomValues(c.ffnSize * h, rng, 0.5f);
        w[p + "ffn_up.weight"] = randomValues(c.ffnSize * h, rng, 0.5f);
        w[p + "ffn_down.weight"] = randomValues(h * c.ffnSize, rng, 0.5f);
    }
    return w;
}

ModelConfig smallConfig() {
    ModelConfig config = tinyConfig();
    config.name = "small";
    config.layers = 2;
    config.hiddenSize = 16;
    config.heads = 4;
    config.kvHeads = 2;
    config.headDim = 4;
    config.ffnSize = 24;
    config.vocabSize = 32;
    config.qkvBias = true;
    return config;
}

double maxAbs(const std::vector<float>& v) {
    double m = 0.0;
    for (float x : v) m = std::max(m, double(std::fabs(x)));
    return m;
}

double maxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

} // namespace

class TestReferenceTransformer : public QObject {
    Q_OBJECT

private slots:
    // Two tokens through one layer, against the equations written out here in double.
    // Position 1 exercises RoPE (adjacent pairing, one pair, angle 1 rad), the causal
    // softmax over two keys and both query heads sharing the single kv head.
    void forwardMatchesStepByStep() {
        const ModelConfig c = tinyConfig();
        const ReferenceWeights w = tinyWeights(c);
        const ReferenceTransformer model(c, w, 1);
        const std::vector<std::int32_t> tokens = {3, 1};

        const std::size_t h = c.hiddenSize, d = c.headDim;
        std::vector<Vector> x, keys, values, queries;
        for (std::size_t t = 0; t < tokens.size(); ++t) {
            const auto& e = w.at("token_embd.weight");
            x.emplace_back(e.begin() + tokens[t] * h, e.begin() + (tokens[t] + 1) * h);
            const Vector n = rmsNorm(x[t], w.at("blk.0.attn_norm.weight"), c.rmsNormEps);
            Vector q = matVec(w.at("blk.0.attn_q.weight"), n);
            Vector k = matVec(w.at("blk.0.attn_k.weight"), n);
            // RoPE, adjacent pair (0,1), frequency theta^0 = 1: angle = position.
            auto rotate = [](Vector& v, std::size_t offset, double angle) {
                const double a = v[offset], b = v[offset + 1];
                v[offset] = a * std::cos(angle) - b * std::sin(angle);
                v[offset + 1] = a * std::sin(angle) + b * std::cos(angle);
            };
            rotate(q, 0, double(t));
            rotate(q, 2, double(t));
            rotate(k, 0, double(t));
            queries.push_back(q);
            keys.push_back(k);
            values.push_back(matVec(w.at("blk.0.attn_v.weight"), n));
        }
        std::vector<float> expectedLogits;
        for (std::size_t t = 0; t < tokens.size(); ++t) {
            Vector attention(c.heads * d, 0.0);
            for (std::size_t head = 0; head < c.heads; ++head) {
                Vector scores;
                for (std::size_t p = 0; p <= t; ++p)
                    scores.push_back((queries[t][head * d] * keys[p][0] +
                                      queries[t][head * d + 1] * keys[p][1]) /
                                     std::sqrt(double(d)));
                double total = 0.0;
                for (double s : scores) total += std::exp(s);
                for (std::size_t p = 0; p <= t; ++p)
                    for (std::size_t i = 0; i < d; ++i)
                        attention[head * d + i] += std::exp(scores[p]) / total * values[p][i];
            }
            const Vector o = matVec(w.at("blk.0.attn_output.weight"), attention);
            for (std::size_t i = 0; i < h; ++i) x[t][i] += o[i];
            const Vector n = rmsNorm(x[t], w.at("blk.0.ffn_norm.weight"), c.rmsNormEps);
            const Vector g = matVec(w.at("blk.0.ffn_gate.weight"), n);
            const Vector u = matVec(w.at("blk.0.ffn_up.weight"), n);
            Vector a(c.ffnSize);
            for (std::size_t i = 0; i < a.size(); ++i) a[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
            const Vector down = matVec(w.at("blk.0.ffn_down.weight"), a);
            for (std::size_t i = 0; i < h; ++i) x[t][i] += down[i];
            const Vector final = rmsNorm(x[t], w.at("output_norm.weight"), c.rmsNormEps);
            for (double v : matVec(w.at("output.weight"), final))
                expectedLogits.push_back(float(v));
        }

        auto cache = model.newCache();
        const std::vector<float> logits = model.forward(tokens, cache, true);
        QCOMPARE(logits.size(), expectedLogits.size());
        QCOMPARE(cache.length, 2u);
        // float vs double over sums of at most 4 terms of magnitude ~1: errors ~1e-6.
        for (std::size_t i = 0; i < logits.size(); ++i)
            QVERIFY2(
                std::fabs(logits[i] - expectedLogits[i]) < 1e-5,
                qPrintable(
                    QString("logit %1: %2 vs %3").arg(i).arg(logits[i]).arg(expectedLogits[i])));
        // The position-1 logits really depend on the rotation: without it they differ.
        ModelConfig unrotated = c;
        unrotated.ropeScaling.type = RopeScalingType::Linear; // positions / 1e9: no rotation
        unrotated.ropeScaling.factor = 1e9f;
        const ReferenceTransformer plain(unrotated, w, 1);
        auto plainCache = plain.newCache();
        const auto plainLogits = plain.forward(tokens, plainCache, true);
        double difference = 0.0;
        for (std::size_t i = c.vocabSize; i < logits.size(); ++i)
            difference = std::max(difference, double(std::fabs(plainLogits[i] - logits[i])));
        QVERIFY(difference > 1e-3);
    }

    void ropeIsIdentityAtPositionZero() {
        const std::vector<float> frequencies = {1.0f, 0.1f};
        for (RopePairing pairing : {RopePairing::Adjacent, RopePairing::SplitHalf}) {
            std::vector<float> head = {0.3f, -1.2f, 2.5f, 0.7f};
            const std::vector<float> before = head;
            applyRope(head, pairing, 0.0, frequencies);
            QCOMPARE(head, before);
        }
    }

    // Position 1 rotates pair i by frequency i. Adjacent pairs (0,1),(2,3); split-half pairs
    // (0,2),(1,3): the same input must come out differently, each as written here.
    void ropeRotatesThePairsOfEachPairing() {
        const std::vector<float> frequencies = {1.0f, 0.1f};
        const std::vector<float> input = {0.3f, -1.2f, 2.5f, 0.7f};
        auto rotated = [](double a, double b, double angle) {
            return std::pair{a * std::cos(angle) - b * std::sin(angle),
                             a * std::sin(angle) + b * std::cos(angle)};
        };
        std::vector<float> adjacent = input;
        applyRope(adjacent, RopePairing::Adjacent, 1.0, frequencies);
        const auto [a0, a1] = rotated(0.3, -1.2, 1.0);
        const auto [a2, a3] = rotated(2.5, 0.7, 0.1);
        const std::vector<double> expectedAdjacent = {a0, a1, a2, a3};

        std::vector<float> splitHalf = input;
        applyRope(splitHalf, RopePairing::SplitHalf, 1.0, frequencies);
        const auto [s0, s2] = rotated(0.3, 2.5, 1.0);
        const auto [s1, s3] = rotated(-1.2, 0.7, 0.1);
        const std::vector<double> expectedSplit = {s0, s1, s2, s3};
        for (std::size_t i = 0; i < 4; ++i) {
            QVERIFY(std::fabs(adjacent[i] - expectedAdjacent[i]) < 1e-6);
            QVERIFY(std::fabs(splitHalf[i] - expectedSplit[i]) < 1e-6);
        }
        QVERIFY(std::fabs(adjacent[1] - splitHalf[1]) > 0.1);
        // Rotation keeps each pair's length.
        QVERIFY(std::fabs(std::hypot(adjacent[0], adjacent[1]) - std::hypot(0.3, -1.2)) < 1e-6);
    }

    void ropeFrequenciesFollowTheScalingRules() {
        ModelConfig c = tinyConfig();
        c.headDim = 8;
        c.ropeTheta = 10000.0f;
        const auto base = ropeInverseFrequencies(c);
        QCOMPARE(base.size(), std::size_t(4));
        for (std::size_t i = 0; i < 4; ++i)
            QVERIFY(std::fabs(base[i] - std::pow(10000.0, -2.0 * double(i) / 8.0)) < 1e-7);

        c.ropeScaling.type = RopeScalingType::Linear;
        c.ropeScaling.factor = 4.0f;
        const auto linear = ropeInverseFrequencies(c);
        for (std::size_t i = 0; i < 4; ++i) QVERIFY(std::fabs(linear[i] - base[i] / 4.0) < 1e-7);

        // llama3 with originalContext 64, low 1, high 4: wavelengths below 16 kept, above 64
        // divided by the factor 8, between blended. Pair wavelengths 2*pi*10^i: 6.3, 62.8, 628,
        // 6283.
        c.ropeScaling = {RopeScalingType::Llama3, 8.0f, 1.0f, 4.0f, 64, {}, 1.0f};
        const auto llama3 = ropeInverseFrequencies(c);
        QVERIFY(std::fabs(llama3[0] - base[0]) < 1e-7);
        const double wavelength1 = 2.0 * std::numbers::pi / base[1];
        const double smooth = (64.0 / wavelength1 - 1.0) / (4.0 - 1.0);
        QVERIFY(std::fabs(llama3[1] - ((1 - smooth) * base[1] / 8.0 + smooth * base[1])) < 1e-7);
        QVERIFY(std::fabs(llama3[2] - base[2] / 8.0) < 1e-9);
        QVERIFY(std::fabs(llama3[3] - base[3] / 8.0) < 1e-9);

        // rope_freqs.weight, when present, divides instead of the computed rule.
        const std::vector<float> divisors = {1.0f, 2.0f, 4.0f, 8.0f};
        const auto fromFile = ropeInverseFrequencies(c, divisors);
        for (std::size_t i = 0; i < 4; ++i)
            QVERIFY(std::fabs(fromFile[i] - base[i] / divisors[i]) < 1e-9);
        const std::vector<float> wrongSize = {1.0f};
        QVERIFY_THROWS_EXCEPTION(ModelError, ropeInverseFrequencies(c, wrongSize));
    }

    // 4 query heads over 2 kv heads: heads 0,1 read kv head 0 and heads 2,3 kv head 1. With one
    // token the attention output of a head is its kv head's value; Wo = identity and a zero
    // FFN make the layer's residual embedding + [v0, v0, v1, v1], seen by the observer.
    void groupedQueryAttentionMapsHeadsToKvHeads() {
        ModelConfig c = tinyConfig();
        c.hiddenSize = 8;
        c.heads = 4;
        c.kvHeads = 2;
        c.headDim = 2;
        c.tiedEmbeddings = true;
        ReferenceWeights w = randomWeights(c, 7);
        std::vector<float> identity(8 * 8, 0.0f);
        for (std::size_t i = 0; i < 8; ++i) identity[i * 8 + i] = 1.0f;
        w["blk.0.attn_output.weight"] = identity;
        w["blk.0.ffn_down.weight"].assign(8 * c.ffnSize, 0.0f);
        w["blk.0.attn_norm.weight"].assign(8, 1.0f);
        const ReferenceTransformer model(c, w, 2);

        std::vector<float> residual;
        int calls = 0;
        ReferenceTransformer observed = model;
        observed.setResidualObserver(
            [&](std::uint32_t layer, std::uint32_t position, std::span<const float> values) {
                QCOMPARE(layer, 0u);
                QCOMPARE(position, 0u);
                residual.assign(values.begin(), values.end());
                ++calls;
            });
        const std::int32_t token = 2;
        observed.forwardUncached(std::span(&token, 1));
        QCOMPARE(calls, 1);

        const auto& e = w.at("token_embd.weight");
        const Vector x(e.begin() + token * 8, e.begin() + (token + 1) * 8);
        const Vector v = matVec(w.at("blk.0.attn_v.weight"),
                                rmsNorm(x, w.at("blk.0.attn_norm.weight"), c.rmsNormEps));
        const std::size_t kvHeadOf[4] = {0, 0, 1, 1};
        for (std::size_t head = 0; head < 4; ++head)
            for (std::size_t i = 0; i < 2; ++i) {
                const double expected = x[head * 2 + i] + v[kvHeadOf[head] * 2 + i];
                QVERIFY2(std::fabs(residual[head * 2 + i] - expected) < 1e-5,
                         qPrintable(QString("head %1 dim %2").arg(head).arg(i)));
            }
        QVERIFY(std::fabs(v[0] - v[2]) > 1e-3); // the two kv heads differ: a wrong map shows
    }

    // Tied: the output head is token_embd. Separate: output.weight, which changes the logits.
    void tiedAndSeparateOutputHeads() {
        ModelConfig c = tinyConfig();
        ReferenceWeights separate = tinyWeights(c);
        ReferenceWeights tied = separate;
        tied.erase("output.weight");
        ModelConfig tiedConfig = c;
        tiedConfig.tiedEmbeddings = true;
        ReferenceWeights copied = separate;
        copied["output.weight"] = separate.at("token_embd.weight");

        const std::vector<std::int32_t> tokens = {0, 4, 2};
        const auto tiedLogits = ReferenceTransformer(tiedConfig, tied, 1).forwardUncached(tokens);
        const auto copiedLogits = ReferenceTransformer(c, copied, 1).forwardUncached(tokens);
        const auto separateLogits = ReferenceTransformer(c, separate, 1).forwardUncached(tokens);
        QCOMPARE(tiedLogits, copiedLogits); // same arithmetic on the same numbers
        QVERIFY(maxAbsDifference(tiedLogits, separateLogits) > 1e-2);
        // Separate without output.weight is an error naming the tensor.
        try {
            ReferenceTransformer(c, tied, 1);
            QFAIL("missing output.weight accepted");
        } catch (const ModelError& error) {
            QCOMPARE(QString::fromStdString(error.field()), QString("output.weight"));
        }
    }

    void rejectsBadInputs() {
        const ModelConfig c = tinyConfig();
        ReferenceWeights w = tinyWeights(c);
        const ReferenceTransformer model(c, w, 1);
        const std::int32_t outside = 5;
        QVERIFY_THROWS_EXCEPTION(ModelError, model.forwardUncached(std::span(&outside, 1)));
        w["blk.0.attn_k.weight"].pop_back();
        QVERIFY_THROWS_EXCEPTION(ModelError, ReferenceTransformer(c, w, 1));
    }

    // Ten steps decoded with the cache (one token per call) against recomputing the whole
    // prefix each step, and against one 10-token call. Tolerance 1e-5 relative to the largest
    // logit: the arithmetic per position is the same in every path (the products sum in a
    // fixed order whatever the batch), so only an indexing bug could exceed it. Two threads,
    // so the row split across threads is exercised too.
    void cachedEqualsUncached() {
        const ModelConfig c = smallConfig();
        const ReferenceTransformer model(c, randomWeights(c, 11), 2);
        const std::vector<std::int32_t> sequence = {1, 7, 30, 2, 2, 19, 5, 0, 31, 12};
        auto cache = model.newCache();
        auto batchCache = model.newCache();
        const auto batched = model.forward(sequence, batchCache, true);
        QCOMPARE(batched.size(), sequence.size() * c.vocabSize);
        for (std::size_t step = 0; step < sequence.size(); ++step) {
            const auto cached = model.forward(std::span(&sequence[step], 1), cache);
            const auto uncached = model.forwardUncached(std::span(sequence.data(), step + 1));
            const std::vector<float> row(batched.begin() + step * c.vocabSize,
                                         batched.begin() + (step + 1) * c.vocabSize);
            const double tolerance = 1e-5 * maxAbs(uncached);
            QVERIFY2(maxAbsDifference(cached, uncached) <= tolerance,
                     qPrintable(QString("step %1").arg(step)));
            QVERIFY2(maxAbsDifference(row, uncached) <= tolerance,
                     qPrintable(QString("batched step %1").arg(step)));
        }
        QCOMPARE(cache.length, std::uint32_t(sequence.size()));
        QCOMPARE(cache.k[1].size(), sequence.size() * c.kvHeads * c.headDim);
    }

    // The residual observer sees every (layer, position) once, in layer order per call.
    void observerSeesEveryLayerAndPosition() {
        const ModelConfig c = smallConfig();
        ReferenceTransformer model(c, randomWeights(c, 3), 1);
        std::vector<std::pair<std::uint32_t, std::uint32_t>> seen;
        model.setResidualObserver(
            [&](std::uint32_t layer, std::uint32_t position, std::span<const float> values) {
                QCOMPARE(values.size(), std::size_t(c.hiddenSize));
                seen.emplace_back(layer, position);
            });
        auto cache = model.newCache();
        const std::vector<std::int32_t> prompt = {3, 4, 5};
        model.forward(prompt, cache);
        const std::int32_t next = 6;
        model.forward(std::span(&next, 1), cache);
        const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {
            {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}};
        QCOMPARE(seen, expected);
    }
};

QTEST_APPLESS_MAIN(TestReferenceTransformer)
#include "test_reference_transformer.moc"
