// Sampler: greedy and its ties, llama.cpp's repetition penalty rule, top-k / top-p and the
// seeded draw.
#include "models/reference/Sampler.hpp"

#include <QtTest>

#include <cmath>
#include <vector>

using namespace inferscope::models;

namespace {
SamplingOptions randomOptions(std::uint64_t seed) {
    SamplingOptions options;
    options.greedy = false;
    options.temperature = 1.0f;
    options.topK = 0;
    options.topP = 1.0f;
    options.seed = seed;
    return options;
}
} // namespace

class TestSampler : public QObject {
    Q_OBJECT

private slots:
    void greedyTakesTheLargest() {
        Sampler sampler({});
        const std::vector<float> logits = {0.1f, -3.0f, 2.5f, 2.4f, -0.2f};
        QCOMPARE(sampler.sample(logits, {}), 2);
        QCOMPARE(argmax(logits), 2);
    }

    void tiesGoToTheLowestIndex() {
        const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 3.0f};
        QCOMPARE(argmax(logits), 1);
        Sampler sampler({});
        QCOMPARE(sampler.sample(logits, {}), 1);
        // Top-k = 1 keeps the lowest of the tied ids too.
        SamplingOptions options = randomOptions(5);
        options.topK = 1;
        Sampler topOne(options);
        for (int i = 0; i < 20; ++i) QCOMPARE(topOne.sample(logits, {}), 1);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, argmax({}));
    }

    void topKOneEqualsGreedy() {
        std::vector<float> logits(100);
        for (std::size_t i = 0; i < logits.size(); ++i)
            logits[i] = std::sin(float(i) * 1.7f) * 4.0f;
        const std::int32_t best = argmax(logits);
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            SamplingOptions options = randomOptions(seed);
            options.topK = 1;
            options.temperature = 5.0f; // flat distribution: only top-k can make this greedy
            Sampler sampler(options);
            QCOMPARE(sampler.sample(logits, {}), best);
        }
    }

    void sameSeedSameTokens() {
        std::vector<float> logits(50);
        for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = float(i % 7) * 0.3f;
        auto draw = [&](std::uint64_t seed) {
            SamplingOptions options = randomOptions(seed);
            options.topK = 40;
            options.topP = 0.95f;
            options.temperature = 0.8f;
            Sampler sampler(options);
            std::vector<std::int32_t> tokens;
            for (int i = 0; i < 64; ++i) tokens.push_back(sampler.sample(logits, tokens));
            return tokens;
        };
        QCOMPARE(draw(42), draw(42));
        QVERIFY(draw(42) != draw(43));
    }

    // Positive logits are divided by the penalty, negative ones multiplied: both less likely.
    void repetitionPenaltyFollowsTheSignRule() {
        SamplingOptions options;
        options.repeatPenalty = 2.0f;
        Sampler sampler(options);
        const std::vector<std::int32_t> history = {0};
        const std::vector<float> positive = {2.0f, 1.5f}; // 2 / 2 = 1 < 1.5
        QCOMPARE(sampler.sample(positive, history), 1);
        const std::vector<float> negative = {-1.0f, -1.5f}; // -1 * 2 = -2 < -1.5 (dividing: -0.5)
        QCOMPARE(sampler.sample(negative, history), 1);
        QCOMPARE(sampler.sample(negative, {}), 0); // no history, no penalty
    }

    void repetitionPenaltyCountsEachTokenOnceInTheWindow() {
        SamplingOptions options;
        options.repeatPenalty = 1.5f;
        Sampler sampler(options);
        const std::vector<float> logits = {2.0f, 1.0f};
        // Once: 2 / 1.5 = 1.33 > 1 (three times would give 0.59 < 1).
        const std::vector<std::int32_t> repeated = {0, 0, 0};
        QCOMPARE(sampler.sample(logits, repeated), 0);
        // Only the last repeatLastN tokens count: 0 is outside a window of 1.
        SamplingOptions windowed = options;
        windowed.repeatPenalty = 4.0f;
        windowed.repeatLastN = 1;
        Sampler recentOnly(windowed);
        const std::vector<std::int32_t> history = {0, 1};
        QCOMPARE(recentOnly.sample(logits, history), 0);
        windowed.repeatLastN = 2;
        Sampler wider(windowed);
        QCOMPARE(wider.sample(std::vector<float>{2.0f, 1.0f, 0.9f}, history), 2);
    }

    void topPKeepsTheArgmax() {
        std::vector<float> logits(30);
        for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = float(i % 5) * 0.1f;
        const std::int32_t best = argmax(logits);
        for (std::uint64_t seed = 0; seed < 50; ++seed) {
            SamplingOptions options = randomOptions(seed);
            options.topP = 0.001f; // smaller than any probability: only the argmax survives
            Sampler sampler(options);
            QCOMPARE(sampler.sample(logits, {}), best);
        }
    }

    // Probabilities 0.5, 0.3, 0.2 and p = 0.75: the smallest prefix reaching 0.75 is {0, 1}.
    void topPKeepsTheSmallestSufficientSet() {
        const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
        SamplingOptions options = randomOptions(9);
        options.topP = 0.75f;
        Sampler sampler(options);
        int counts[3] = {0, 0, 0};
        for (int i = 0; i < 400; ++i) ++counts[sampler.sample(logits, {})];
        QCOMPARE(counts[2], 0);
        QVERIFY(counts[0] > 0 && counts[1] > 0);
    }

    // The draw follows the distribution: p = 0.7 / 0.3 over 4000 draws (fixed seed, so this
    // is deterministic; 0.05 is ~7 standard deviations).
    void drawsFollowTheProbabilities() {
        const std::vector<float> logits = {std::log(0.7f), std::log(0.3f)};
        Sampler sampler(randomOptions(1234));
        int zeros = 0;
        for (int i = 0; i < 4000; ++i) zeros += sampler.sample(logits, {}) == 0;
        QVERIFY2(std::fabs(zeros / 4000.0 - 0.7) < 0.05, qPrintable(QString::number(zeros)));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
