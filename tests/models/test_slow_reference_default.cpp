// The CPU reference transformer on the real default model (SmolLM2-135M-Instruct, Q4_1)
// against llama.cpp, an independent implementation: tests/data/reference-smollm2.json was
// written by scripts/make-reference-fixtures.py. Token ids come from the fixture, so this
// checks the transformer alone, not our tokenizer.
//
// The fixture's main ("exact") run is llama.cpp on an f32 copy of the same weights with an
// f32 KV cache: the very numbers our f32 reference uses, so the two agree to ~1e-4 and the
// tolerances below can be tight. Its "native" run (llama.cpp's own Q4_1 kernels, which round
// activations to 8 bits, with an f16 KV cache) differs from both by up to ~2 in a logit; it
// is reported, and only checked with a floor that catches gross bugs.
#include "models/LoadedModel.hpp"
#include "models/ModelError.hpp"
#include "models/reference/Perplexity.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/reference/Sampler.hpp"

#include "tests/DefaultModel.hpp"
#include <QtTest>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>

using namespace inferscope::models;

namespace {
std::vector<std::int32_t> ids(const nlohmann::json& array) {
    return array.get<std::vector<std::int32_t>>();
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

class TestSlowReferenceDefault : public QObject {
    Q_OBJECT

    std::unique_ptr<ReferenceTransformer> model_;
    nlohmann::json fixture_;
    std::vector<float> teacherLogits_; // all positions of the teacher-forcing tokens

    std::vector<float> lastRow(const std::vector<float>& logits) const {
        const std::size_t vocab = model_->config().vocabSize;
        return {logits.end() - std::ptrdiff_t(vocab), logits.end()};
    }

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        std::ifstream in(INFERSCOPE_TEST_DATA "/reference-smollm2.json");
        QVERIFY(in.good());
        fixture_ = nlohmann::json::parse(in);
        const auto start = std::chrono::steady_clock::now();
        LoadedModel loaded = loadGgufModel(path);
        QCOMPARE(QString::fromStdString(path.filename().string()),
                 QString::fromStdString(fixture_["model"].get<std::string>()));
        model_ =
            std::make_unique<ReferenceTransformer>(loaded.config, dequantizeAll(loaded.weights), 2);
        qInfo("loaded and dequantized in %.1f s", secondsSince(start));
    }

    // Given the same context, our top-1 equals llama.cpp's (exact run) at >= 98% of the 600
    // positions; a flip is only acceptable at a near tie. Against llama.cpp's native Q4_1 run
    // (8-bit activations) agreement was measured at 96%; the 90% floor there only guards
    // against a gross bug that the exact run could somehow share.
    void teacherForcedTopOneAgreement() {
        const auto& tf = fixture_["teacherForcing"];
        const auto tokens = ids(tf["tokens"]);
        const auto expected = ids(tf["top1"]);
        const auto native = ids(tf["nativeTop1"]);
        const auto margins = tf["top1Margin"].get<std::vector<double>>();
        const auto start = std::chrono::steady_clock::now();
        auto cache = model_->newCache();
        teacherLogits_ = model_->forward(tokens, cache, true);
        const std::vector<float>& logits = teacherLogits_;
        const double seconds = secondsSince(start);
        const std::size_t vocab = model_->config().vocabSize;
        QCOMPARE(logits.size(), tokens.size() * vocab);
        std::size_t agree = 0, agreeNative = 0, disagreeWideMargin = 0;
        for (std::size_t p = 0; p < tokens.size(); ++p) {
            const std::int32_t ours = argmax(std::span(&logits[p * vocab], vocab));
            if (ours == expected[p])
                ++agree;
            else if (margins[p] >= 0.01)
                ++disagreeWideMargin;
            if (ours == native[p]) ++agreeNative;
        }
        const double agreement = 100.0 * double(agree) / double(tokens.size());
        const double nativeAgreement = 100.0 * double(agreeNative) / double(tokens.size());
        qInfo("teacher forcing over %zu tokens (%.1f s, %.0f tokens/s): top-1 agrees with "
              "llama.cpp f32 at %.2f%% (%zu disagreements at a margin >= 0.01), with llama.cpp "
              "native Q4_1 at %.2f%%",
              tokens.size(), seconds, double(tokens.size()) / seconds, agreement,
              disagreeWideMargin, nativeAgreement);
        QVERIFY2(agreement >= 98.0, qPrintable(QString::number(agreement)));
        QCOMPARE(disagreeWideMargin, std::size_t(0));
        QVERIFY2(nativeAgreement >= 90.0, qPrintable(QString::number(nativeAgreement)));
    }

    // The first perplexity chunk (ctx 512) of the corpus by llama-perplexity's rule, from the
    // teacher-forcing logits already computed (the corpus starts with the same tokens and
    // attention is causal, so the first 512 rows are exactly those of a 512-token window).
    // Tolerance 1e-4 on the chunk's mean NLL (~2.6 nats): f32 summation-order differences
    // were measured at ~1e-6. The whole corpus takes minutes here; the report of the last
    // full run: ours 16.00028, llama.cpp f32 16.00028, llama.cpp native Q4_1 15.9397.
    void firstPerplexityChunkMatchesLlamaCpp() {
        const auto& ppl = fixture_["perplexity"];
        const auto corpus = ids(ppl["corpusTokens"]);
        const auto teacherTokens = ids(fixture_["teacherForcing"]["tokens"]);
        const std::uint32_t ctx = ppl["ctx"].get<std::uint32_t>();
        QVERIFY(teacherTokens.size() >= ctx);
        QVERIFY(std::equal(teacherTokens.begin(), teacherTokens.end(), corpus.begin()));
        QVERIFY(!fixture_["addBos"].get<bool>()); // else window[0] would differ from the corpus
        const std::size_t vocab = model_->config().vocabSize;
        QCOMPARE(teacherLogits_.size(), teacherTokens.size() * vocab);
        PerplexityOptions options;
        options.context = ctx;
        options.tokenLimit = ctx;
        const PerplexityResult result = computePerplexity(
            corpus, std::uint32_t(vocab), options, [&](std::span<const std::int32_t> window) {
                return std::vector<float>(teacherLogits_.begin(),
                                          teacherLogits_.begin() +
                                              std::ptrdiff_t(window.size() * vocab));
            });
        const double expected = ppl["chunkMeanNll"][0].get<double>();
        qInfo("perplexity chunk 1: mean NLL %.6f (ppl %.4f) vs llama.cpp f32 %.6f, native %.6f",
              result.meanNll, result.perplexity, expected,
              ppl["nativeChunkMeanNll"][0].get<double>());
        QCOMPARE(result.scoredTokens, std::uint64_t(ctx - 1 - ctx / 2));
        QVERIFY(std::fabs(result.meanNll - expected) <= 1e-4);
    }

    // Greedy decoding reproduces llama.cpp's continuations; the two may part only at a step
    // where llama.cpp itself saw a near tie (top-2 margin < 0.05), after which the contexts
    // differ and the comparison of that prompt ends.
    void greedyContinuationsMatchLlamaCpp() {
        std::size_t compared = 0, total = 0, partedAtNearTie = 0;
        const auto start = std::chrono::steady_clock::now();
        for (const auto& case_ : fixture_["greedy"]) {
            const auto prompt = ids(case_["promptIds"]);
            const auto expected = ids(case_["generatedIds"]);
            const auto margins = case_["top2Margins"].get<std::vector<double>>();
            auto cache = model_->newCache();
            std::vector<float> logits = model_->forward(prompt, cache);
            for (std::size_t step = 0; step < expected.size(); ++step) {
                const std::int32_t token = argmax(logits);
                if (token != expected[step]) {
                    QVERIFY2(margins[step] < 0.05,
                             qPrintable(QString("prompt %1, step %2: %3 vs llama.cpp %4 "
                                                "(llama.cpp margin %5)")
                                            .arg(QString::fromStdString(case_["prompt"]))
                                            .arg(step)
                                            .arg(token)
                                            .arg(expected[step])
                                            .arg(margins[step])));
                    ++partedAtNearTie;
                    break;
                }
                ++compared;
                if (step + 1 < expected.size())
                    logits = model_->forward(std::span(&token, 1), cache);
            }
            total += expected.size();
        }
        qInfo("greedy: %zu of %zu steps equal to llama.cpp f32, %zu prompts parted at a near "
              "tie; %.1f s",
              compared, total, partedAtNearTie, secondsSince(start));
        QVERIFY(compared >= total / 2); // the comparison is not vacuous
    }

    // Cached decoding and recomputing the whole sequence each step pick the same 16 tokens.
    void cachedEqualsUncachedTokens() {
        const auto prompt = ids(fixture_["greedy"][0]["promptIds"]);
        std::vector<std::int32_t> cachedSequence = prompt, uncachedSequence = prompt;
        auto cache = model_->newCache();
        std::vector<float> logits = model_->forward(prompt, cache);
        for (int step = 0; step < 16; ++step) {
            const std::int32_t cachedToken = argmax(logits);
            cachedSequence.push_back(cachedToken);
            logits = model_->forward(std::span(&cachedToken, 1), cache);
            uncachedSequence.push_back(argmax(model_->forwardUncached(uncachedSequence)));
        }
        QCOMPARE(cachedSequence, uncachedSequence);
    }

    // The 20 largest last-position logits of one prompt, value by value, against llama.cpp's
    // exact run. Tolerance 1e-3: both compute in f32 from identical weights and differ only in
    // summation order (llama.cpp's SIMD blocking vs our 8 partial sums), which 30 layers grow
    // to a measured 6e-5 on logits up to ~30, plus the fixture's 4-decimal rounding (5e-5).
    // llama.cpp's native Q4_1 path differs by ~0.3-1.5 here, so any quantization-sized or
    // structural error fails. The native differences are printed for the record.
    void topLogitsMatch() {
        const auto& d = fixture_["lastLogits"];
        const auto prompt = ids(d["promptIds"]);
        const auto topIds = ids(d["topIds"]);
        const auto topLogits = d["topLogits"].get<std::vector<double>>();
        const auto nativeLogits = d["nativeTopLogits"].get<std::vector<double>>();
        auto cache = model_->newCache();
        const std::vector<float> logits = model_->forward(prompt, cache);
        QCOMPARE(argmax(logits), topIds[0]);
        double largest = 0.0, largestNative = 0.0;
        for (std::size_t i = 0; i < topIds.size(); ++i) {
            const double ours = logits[std::size_t(topIds[i])];
            const double difference = std::fabs(ours - topLogits[i]);
            largest = std::max(largest, difference);
            largestNative = std::max(largestNative, std::fabs(ours - nativeLogits[i]));
            QVERIFY2(difference <= 1e-3, qPrintable(QString("id %1: %2 vs llama.cpp %3")
                                                        .arg(topIds[i])
                                                        .arg(ours)
                                                        .arg(topLogits[i])));
        }
        qInfo("top-20 logits: largest difference %.5f from llama.cpp f32, %.3f from llama.cpp "
              "native Q4_1",
              largest, largestNative);
    }
};

QTEST_APPLESS_MAIN(TestSlowReferenceDefault)
#include "test_slow_reference_default.moc"
