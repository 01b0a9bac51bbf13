// PerplexityTies: a scheme is called better only beyond the noise of the text, by a paired test
// on the per-token log-likelihoods both runs scored.
#include "compute/experiments/quantization/PerplexityTies.hpp"

#include <QtTest>
#include <cmath>

using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

namespace {
// A base run, and the same with a shift and alternating noise of +/- `noise` per token.
std::vector<double> run(std::size_t tokens, double shift, double noise) {
    std::vector<double> nll;
    for (std::size_t i = 0; i < tokens; ++i)
        nll.push_back(2.0 + std::sin(double(i)) + shift + (i % 2 ? noise : -noise));
    return nll;
}
SchemePerplexity scheme(const std::string& name, const std::vector<double>& nll) {
    double sum = 0;
    for (double v : nll) sum += v;
    return {name, std::exp(sum / double(nll.size())), nll};
}
} // namespace

class TestPerplexityTies : public QObject {
    Q_OBJECT
private slots:
    void pairedDifference() {
        const auto base = run(400, 0, 0);
        const auto same = pairedNllDifference(base, base);
        QCOMPARE(same.meanNats, 0.0);
        QCOMPARE(same.halfWidth95, 0.0);
        QVERIFY(same.tied());
        // A constant shift has no spread: any shift is beyond the noise.
        const auto shifted = pairedNllDifference(base, run(400, 0.001, 0));
        QVERIFY(std::fabs(shifted.meanNats - 0.001) < 1e-12);
        QVERIFY(shifted.halfWidth95 < 1e-9);
        QVERIFY(!shifted.tied());
        // Differences of +/- 0.5 per token: standard error 0.5 / sqrt(400) = 0.025 (times
        // sqrt(400 / 399) for the sample), so a mean of 0.01 ties and one of 0.1 does not.
        const auto noisy = pairedNllDifference(base, run(400, 0.01, 0.5));
        QVERIFY(std::fabs(noisy.halfWidth95 - 1.96 * 0.5 * std::sqrt(1.0 / 399.0)) < 1e-9);
        QVERIFY(noisy.tied());
        QVERIFY(!pairedNllDifference(base, run(400, 0.1, 0.5)).tied());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, pairedNllDifference(base, run(399, 0, 0)));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, pairedNllDifference({}, {}));
    }

    void rankingCallsOnlyWhatTheNoiseAllows() {
        const auto base = run(400, 0, 0);
        // fp32 and int8-row differ by noise only; int4-tensor is worse beyond it.
        const std::vector<SchemePerplexity> schemes{scheme("fp32", run(400, 0.005, 0.5)),
                                                    scheme("int8-row", base),
                                                    scheme("int4-tensor", run(400, 0.3, 0.5))};
        const auto ranking = rankPerplexities(schemes);
        QCOMPARE(ranking.lowest, std::size_t(1));
        QCOMPARE(ranking.highest, std::size_t(2));
        QCOMPARE(ranking.tiedWithLowest, (std::vector<bool>{true, true, false}));
        QVERIFY(std::fabs(ranking.aboveLowestPercent[2] - std::expm1(0.3) * 100) < 1e-9);
        QVERIFY(ranking.conclusion.find("Lowest perplexity int8-row") == 0);
        QVERIFY(ranking.conclusion.find("tied within the noise") != std::string::npos);
        QVERIFY(ranking.conclusion.find("with fp32") != std::string::npos);
        QVERIFY(ranking.conclusion.find("Highest int4-tensor") != std::string::npos);

        const auto table = perplexityRankingTable(schemes);
        QCOMPARE(table.id, std::string("quality-ranking"));
        QCOMPARE(std::get<std::string>(table.at(0, "verdict")),
                 std::string("ties with the lowest"));
        QCOMPARE(std::get<std::string>(table.at(1, "verdict")), std::string("lowest"));
        QCOMPARE(std::get<std::string>(table.at(2, "verdict")), std::string("highest"));
        QCOMPARE(table.notes.front(), ranking.conclusion);

        // Two schemes within the noise: neither is best nor worst.
        const auto tie =
            rankPerplexities({scheme("fp32", run(400, 0.005, 0.5)), scheme("int8-row", base)});
        QVERIFY(tie.conclusion.find("No scheme differs from another beyond the noise") == 0);
        QVERIFY(tie.conclusion.find("best") == std::string::npos);
        QVERIFY(tie.conclusion.find("worst") == std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestPerplexityTies)
#include "test_perplexity_ties.moc"
