// Perplexity by llama-perplexity's rule: chunking, which positions are scored, BOS handling.
#include "models/reference/Perplexity.hpp"

#include <QtTest>

#include <cmath>
#include <numeric>
#include <stdexcept>

using namespace inferscope::models;

namespace {
std::vector<std::int32_t> sequence(std::size_t n, std::int32_t vocab) {
    std::vector<std::int32_t> tokens(n);
    for (std::size_t i = 0; i < n; ++i) tokens[i] = std::int32_t((i * 7 + 3) % std::size_t(vocab));
    return tokens;
}
} // namespace

class TestPerplexity : public QObject {
    Q_OBJECT

private slots:
    // Uniform logits: every token has probability 1/V, so the perplexity is V exactly.
    void uniformLogitsGiveTheVocabularySize() {
        const std::uint32_t vocab = 37;
        const auto tokens = sequence(300, vocab);
        PerplexityOptions options;
        options.context = 64;
        const auto result = computePerplexity(tokens, vocab, options, [&](auto window) {
            return std::vector<float>(window.size() * vocab, 0.25f);
        });
        QVERIFY(std::fabs(result.perplexity - vocab) < 1e-9 * vocab);
        QCOMPARE(result.chunks, 4u);                          // 300 / 64, tail dropped
        QCOMPARE(result.scoredTokens, std::uint64_t(4 * 31)); // 64 - 1 - 32 per chunk
        QCOMPARE(result.chunkMeanNll.size(), std::size_t(4));
    }

    // Pieces: the same numbers as whole windows, no piece holds more than rowsPerPiece rows of
    // logits, and the window's last token is never run.
    void piecesGiveTheWholeWindowsNumbers() {
        const std::uint32_t vocab = 11;
        const auto tokens = sequence(500, vocab);
        // Logits that depend on every token so far: a piece sees its window's prefix.
        auto logitsAfter = [&](std::span<const std::int32_t> prefix) {
            std::vector<float> row(vocab);
            const std::int64_t sum = std::accumulate(prefix.begin(), prefix.end(), 0ll);
            for (std::uint32_t i = 0; i < vocab; ++i) row[i] = float((sum * (i + 3)) % 17) / 4.0f;
            return row;
        };
        auto whole = [&](std::span<const std::int32_t> window) {
            std::vector<float> rows;
            for (std::size_t p = 0; p < window.size(); ++p) {
                const auto row = logitsAfter(window.first(p + 1));
                rows.insert(rows.end(), row.begin(), row.end());
            }
            return rows;
        };
        std::vector<std::int32_t> seen;
        std::size_t largestPiece = 0, tokensRun = 0;
        const WindowPieces pieces = [&](std::span<const std::int32_t> piece, bool restart,
                                        bool wantLogits) {
            if (restart) seen.clear();
            std::vector<float> rows;
            for (auto token : piece) {
                seen.push_back(token);
                if (!wantLogits) continue;
                const auto row = logitsAfter(seen);
                rows.insert(rows.end(), row.begin(), row.end());
            }
            if (wantLogits) largestPiece = std::max(largestPiece, piece.size());
            tokensRun += piece.size();
            return rows;
        };
        PerplexityOptions options;
        options.context = 120;
        options.rowsPerPiece = 25;
        const auto expected = computePerplexity(tokens, vocab, options, whole);
        const auto streamed = computePerplexity(tokens, vocab, options, pieces);
        QCOMPARE(streamed.tokenNll, expected.tokenNll);
        QCOMPARE(streamed.perplexity, expected.perplexity);
        QCOMPARE(largestPiece, std::size_t(25));
        QCOMPARE(tokensRun, std::size_t(4 * 119)); // 4 windows, each but its last token
    }

    void chunkCountsAndTokenLimit() {
        const std::uint32_t vocab = 10;
        const auto tokens = sequence(1000, vocab);
        int calls = 0;
        auto uniform = [&](std::span<const std::int32_t> window) {
            ++calls;
            return std::vector<float>(window.size() * vocab, 0.0f);
        };
        PerplexityOptions options;
        options.context = 100;
        QCOMPARE(computePerplexity(tokens, vocab, options, uniform).scoredTokens,
                 std::uint64_t(10 * 49));
        QCOMPARE(calls, 10);
        options.tokenLimit = 550;
        const auto limited = computePerplexity(tokens, vocab, options, uniform);
        QCOMPARE(limited.chunks, 5u);
        QCOMPARE(limited.scoredTokens, std::uint64_t(5 * 49));
        options.context = 101; // odd: first = 50, scored 101 - 1 - 50 = 50 per chunk
        options.tokenLimit = 0;
        QCOMPARE(computePerplexity(tokens, vocab, options, uniform).scoredTokens,
                 std::uint64_t(9 * 50));
    }

    // Only positions ctx/2 .. ctx-2 count. Those rows give the next token logit ln 2 and the
    // two other tokens 0, so probability 2 / (2 + 1 + 1) = 1/2; every other row gives it
    // e^-50. Scoring exactly the right rows yields a perplexity of 2; any other row blows it up.
    void scoresOnlyTheSecondHalf() {
        const std::uint32_t vocab = 3;
        const std::uint32_t ctx = 16;
        const auto tokens = sequence(40, vocab);
        PerplexityOptions options;
        options.context = ctx;
        int progressCalls = 0;
        options.progress = [&](std::uint32_t chunk, std::uint32_t chunks, double running) {
            QCOMPARE(chunk, std::uint32_t(progressCalls));
            QCOMPARE(chunks, 2u);
            QVERIFY(std::fabs(running - 2.0) < 1e-6); // ln 2 rounded to float
            ++progressCalls;
        };
        const auto result = computePerplexity(tokens, vocab, options, [&](auto window) {
            std::vector<float> rows(window.size() * vocab, 0.0f);
            for (std::size_t p = 0; p + 1 < window.size(); ++p) {
                const bool scored = p >= ctx / 2;
                rows[p * vocab + std::size_t(window[p + 1])] = scored ? std::log(2.0f) : -50.0f;
            }
            return rows;
        });
        QVERIFY(std::fabs(result.perplexity - 2.0) < 1e-6);
        QCOMPARE(result.scoredTokens, std::uint64_t(2 * 7));
        QCOMPARE(progressCalls, 2);
    }

    // With a BOS id each chunk's first token is replaced (targets are unaffected);
    // without, the window is the chunk as it is.
    void replacesTheFirstTokenByBos() {
        const std::uint32_t vocab = 50;
        const auto tokens = sequence(64, vocab);
        for (bool withBos : {false, true}) {
            PerplexityOptions options;
            options.context = 32;
            if (withBos) options.bosId = 49;
            std::size_t chunk = 0;
            computePerplexity(tokens, vocab, options, [&](std::span<const std::int32_t> window) {
                const std::vector<std::int32_t> expectedTail(tokens.begin() + chunk * 32 + 1,
                                                             tokens.begin() + (chunk + 1) * 32);
                [&] {
                    QCOMPARE(window[0], withBos ? 49 : tokens[chunk * 32]);
                    QCOMPARE(std::vector<std::int32_t>(window.begin() + 1, window.end()),
                             expectedTail);
                }();
                ++chunk;
                return std::vector<float>(window.size() * vocab, 0.0f);
            });
            QCOMPARE(chunk, std::size_t(2));
        }
    }

    void rejectsWhatCannotBeScored() {
        const auto tokens = sequence(20, 5);
        auto uniform = [](std::span<const std::int32_t> window) {
            return std::vector<float>(window.size() * 5, 0.0f);
        };
        PerplexityOptions options;
        options.context = 32; // longer than the text
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 computePerplexity(tokens, 5, options, uniform));
        options.context = 2; // nothing left to score in a chunk
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 computePerplexity(tokens, 5, options, uniform));
        options.context = 8;
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            computePerplexity(tokens, 5, options, [](auto) { return std::vector<float>(3); }));
    }
};

QTEST_APPLESS_MAIN(TestPerplexity)
#include "test_perplexity.moc"
