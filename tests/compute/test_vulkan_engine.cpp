// The whole GPU forward pass on synthetic models (real GGUF / safetensors files written by
// models/SyntheticModel) against the CPU reference transformer, plus the engine's
// promises: cached == uncached greedy tokens, a batch equals single runs, the paged KV
// cache's bookkeeping, the probes, and a silent validation layer.
//
// Tolerance for logits: the GPU keeps K and V in f16 (relative rounding 2^-11), the rest in
// f32, so |gpu - cpu| <= 2e-3 * (1 + max|cpu logit| of the row), and the top-1 token must
// be the same at every position.
#include "compute/engine/Engine.hpp"
#include "models/LoadedModel.hpp"
#include "models/formats/TensorType.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/compute/LogitComparison.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <memory>

using namespace inferscope;
using namespace inferscope::compute;

using inferscope::tests::compareLogits;

namespace {

std::vector<std::int32_t> promptTokens(std::uint32_t count, std::uint32_t vocab,
                                       std::uint32_t seed) {
    std::vector<std::int32_t> tokens;
    for (std::uint32_t i = 0; i < count; ++i) {
        tokens.push_back(std::int32_t((i * 7919u + seed * 104729u + 13u) % vocab));
    }
    return tokens;
}

} // namespace

class VulkanEngineTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<models::LoadedModel> llama_;
    std::unique_ptr<models::ReferenceTransformer> llamaReference_;
    std::uint32_t validationErrors_ = 0;

    void checkValidation(const Engine& engine) {
        const auto& log = engine.context().validationLog();
        for (const auto& m : log.messages()) qWarning("%s", m.c_str());
        validationErrors_ += log.errors();
        QCOMPARE(log.errors(), 0u);
    }

    // Prefill + greedy decode on both; logits compared at every position.
    void compareWithReference(Engine& engine, const models::ReferenceTransformer& reference,
                              const std::vector<std::int32_t>& prompt, std::uint32_t decode) {
        const auto vocab = reference.config().vocabSize;
        auto cache = reference.newCache();
        const auto cpuPrompt = reference.forward(prompt, cache, true);
        auto step = engine.step({{1, prompt}}, true);
        QCOMPARE(step.sequences.size(), std::size_t(1));
        QCOMPARE(step.sequences[0].logits.size(), cpuPrompt.size());
        QVERIFY(compareLogits(step.sequences[0].logits, cpuPrompt, vocab, "prefill") <= 1.0);
        for (std::size_t row = 0; row < prompt.size(); ++row) {
            QCOMPARE(step.sequences[0].argmax[row],
                     models::argmax(std::span<const float>(cpuPrompt).subspan(row * vocab, vocab)));
        }
        std::int32_t next = step.sequences[0].argmax.back();
        for (std::uint32_t i = 0; i < decode; ++i) {
            const std::vector<std::int32_t> one = {next};
            const auto cpu = reference.forward(one, cache);
            auto gpu = engine.step({{1, one}});
            QVERIFY(compareLogits(gpu.sequences[0].logits, cpu, vocab, "decode") <= 1.0);
            QCOMPARE(gpu.sequences[0].argmax[0], models::argmax(cpu));
            next = gpu.sequences[0].argmax[0];
        }
        QCOMPARE(engine.sequenceLength(1), std::uint32_t(prompt.size() + decode));
        engine.release(1);
    }

    static models::SyntheticModelSpec llamaSpec() {
        models::SyntheticModelSpec spec;
        spec.architecture = "llama";
        spec.layers = 2;
        spec.hiddenSize = 64;
        spec.heads = 4;
        spec.kvHeads = 2;
        spec.headDim = 16;
        spec.ffnSize = 96;
        spec.vocabSize = 300;
        spec.outlierDims = {3, 41};
        spec.seed = 7;
        return spec;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "llama.gguf";
        models::writeSyntheticGguf(llamaSpec(), path);
        llama_ = std::make_unique<models::LoadedModel>(models::loadModel(path));
        llamaReference_ = std::make_unique<models::ReferenceTransformer>(
            llama_->config, models::dequantizeAll(llama_->weights), 2);
    }

    void forwardMatchesReferenceF32() {
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        Engine engine(*llama_, options);
        // 37 positions: three KV blocks of 16, the last one partly filled.
        compareWithReference(engine, *llamaReference_, promptTokens(37, 300, 1), 12);
        checkValidation(engine);
    }

    void forwardMatchesReferenceF16() {
        // The reference gets the same f16-rounded matrices the GPU holds.
        auto weights = models::dequantizeAll(llama_->weights);
        for (auto& [name, values] : weights) {
            if (name.find("norm") != std::string::npos || name.find("bias") != std::string::npos)
                continue;
            for (auto& v : values) v = models::halfToFloat(models::floatToHalf(v));
        }
        models::ReferenceTransformer reference(llama_->config, weights, 2);
        EngineOptions options;
        options.weightFormat = WeightFormat::F16;
        options.blockSize = 8;
        Engine engine(llama_->config, weights, options);
        compareWithReference(engine, reference, promptTokens(21, 300, 2), 8);
        checkValidation(engine);
    }

    void forwardMatchesReferenceQ8_0() {
        // Untied head: the engine keeps the embedding table in f16 and the matrices (head
        // included) in Q8_0; the reference gets exactly those values.
        auto spec = llamaSpec();
        spec.tiedEmbeddings = false;
        spec.seed = 11;
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "untied.gguf";
        models::writeSyntheticGguf(spec, path);
        const auto model = models::loadModel(path);
        auto weights = models::dequantizeAll(model.weights);
        for (auto& [name, values] : weights) {
            if (name.find("norm") != std::string::npos || name.find("bias") != std::string::npos)
                continue;
            const auto format =
                name == "token_embd.weight" ? WeightFormat::F16 : WeightFormat::Q8_0;
            const auto cols = std::uint32_t(model.weights.at(name).cols());
            values = roundTripWeights(values, cols, format);
        }
        models::ReferenceTransformer reference(model.config, weights, 2);
        EngineOptions options;
        options.weightFormat = WeightFormat::Q8_0;
        Engine engine(model.config, weights, options);
        compareWithReference(engine, reference, promptTokens(23, 300, 5), 8);
        checkValidation(engine);
    }

    void qwen2SafetensorsSplitHalfWithBias() {
        auto spec = llamaSpec();
        spec.architecture = "qwen2";
        spec.qkvBias = true;
        spec.tiedEmbeddings = false;
        spec.heads = 6;
        spec.kvHeads = 2;
        spec.headDim = 8;
        spec.hiddenSize = 48;
        spec.ropeTheta = 1000000.0f;
        const auto folder = std::filesystem::path(dir_.path().toStdString()) / "qwen2";
        models::writeSyntheticSafetensors(spec, folder);
        const auto model = models::loadModel(folder);
        QCOMPARE(int(model.config.ropePairing), int(models::RopePairing::SplitHalf));
        QVERIFY(model.config.qkvBias);
        models::ReferenceTransformer reference(model.config, models::dequantizeAll(model.weights),
                                               2);
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        Engine engine(model, options);
        compareWithReference(engine, reference, promptTokens(19, spec.vocabSize, 3), 6);
        checkValidation(engine);
    }

    void cachedAndUncachedGiveIdenticalTokens() {
        EngineOptions options;
        Engine cached(*llama_, options);
        options.cached = false;
        Engine uncached(*llama_, options);
        const auto prompt = promptTokens(9, 300, 4);
        auto a = cached.step({{5, prompt}});
        auto b = uncached.step({{5, prompt}});
        std::vector<std::int32_t> tokensA = {a.sequences[0].argmax[0]};
        std::vector<std::int32_t> tokensB = {b.sequences[0].argmax[0]};
        std::uint32_t uncachedRows = 0;
        for (int i = 0; i < 16; ++i) {
            a = cached.step({{5, {tokensA.back()}}});
            b = uncached.step({{5, {tokensB.back()}}});
            QCOMPARE(a.probes.decodeTokens, 1u);
            uncachedRows += b.probes.prefillTokens;
            tokensA.push_back(a.sequences[0].argmax[0]);
            tokensB.push_back(b.sequences[0].argmax[0]);
        }
        QCOMPARE(tokensA, tokensB);
        // Uncached really recomputed: step i ran all 9 + i + 1 positions.
        QCOMPARE(uncachedRows, 16u * 10u + 15u * 16u / 2u);
        QCOMPARE(uncached.kvCache().usedBlocks(), 0u); // nothing kept between steps
        checkValidation(cached);
        checkValidation(uncached);
    }

    void batchOfFourEqualsSingleRuns() {
        EngineOptions options;
        options.maxTokensPerStep = 32; // the 4-prompt prefill runs as several submissions
        Engine batched(*llama_, options);
        Engine single(*llama_, options);
        const std::vector<std::uint32_t> lengths = {1, 5, 17, 33};
        std::vector<SequenceInput> prefill;
        for (std::uint32_t s = 0; s < 4; ++s) {
            prefill.push_back({100 + s, promptTokens(lengths[s], 300, 10 + s)});
        }
        auto batch = batched.step(prefill);
        QVERIFY(batch.probes.submissions >= 2);
        std::vector<std::vector<float>> expected;
        for (std::uint32_t s = 0; s < 4; ++s) {
            auto one = single.step({prefill[s]});
            QCOMPARE(batch.sequences[s].sequence, SequenceId(100 + s));
            QCOMPARE(batch.sequences[s].argmax, one.sequences[0].argmax);
            QVERIFY(compareLogits(batch.sequences[s].logits, one.sequences[0].logits, 300,
                                  "batch prefill") <= 0.01);
        }
        // Decode all four together for 6 steps; each against its own single run.
        std::vector<std::int32_t> next;
        for (auto& s : batch.sequences) next.push_back(s.argmax[0]);
        for (int step = 0; step < 6; ++step) {
            std::vector<SequenceInput> decode;
            for (std::uint32_t s = 0; s < 4; ++s) decode.push_back({100 + s, {next[s]}});
            auto together = batched.step(decode);
            QCOMPARE(together.probes.decodeTokens, 4u);
            for (std::uint32_t s = 0; s < 4; ++s) {
                auto alone = single.step({decode[s]});
                QCOMPARE(together.sequences[s].argmax, alone.sequences[0].argmax);
                QVERIFY(compareLogits(together.sequences[s].logits, alone.sequences[0].logits, 300,
                                      "batch decode") <= 0.01);
                next[s] = alone.sequences[0].argmax[0];
            }
        }
        checkValidation(batched);
        checkValidation(single);
    }

    void kvCapacityChangesInPlace() {
        EngineOptions options;
        options.kvCapacityTokens = 512;
        Engine engine(*llama_, options);
        const auto prompt = promptTokens(9, 300, 7);
        const auto before = engine.step({{1, prompt}});
        const auto reserved = engine.memory().kvReservedBytes;
        const auto activations = engine.memory().activationBytes;
        // A cache a quarter the size: the engine holds less and computes the same.
        engine.setKvCapacity(128);
        QCOMPARE(engine.memory().kvReservedBytes, reserved / 4);
        QCOMPARE(engine.kvCache().capacityBlocks(), 128u / options.blockSize);
        QCOMPARE(engine.sequenceLength(1), 0u); // sequences dropped with their cache
        const auto small = engine.step({{1, prompt}});
        QCOMPARE(small.sequences[0].argmax, before.sequences[0].argmax);
        QCOMPARE(compareLogits(small.sequences[0].logits, before.sequences[0].logits, 300,
                               "smaller cache"),
                 0.0);
        // Too long for the smaller cache now; whole again after it comes back.
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.step({{2, promptTokens(200, 300, 8)}}));
        engine.setKvCapacity(512);
        QCOMPARE(engine.memory().kvReservedBytes, reserved);
        QCOMPARE(engine.memory().activationBytes, activations);
        const auto again = engine.step({{3, prompt}});
        QCOMPARE(again.sequences[0].logits, before.sequences[0].logits);
        engine.step({{2, promptTokens(200, 300, 8)}});
        checkValidation(engine);
    }

    void kvCacheBookkeeping() {
        KvCache cache(30, 3, 64, 16, 8, 4, 4);
        QCOMPARE(cache.kvBytesPerToken(), std::uint64_t(2 * 30 * 3 * 64 * 2)); // 23,040
        const std::uint64_t perLayer = 2 * 3 * 64 * 2; // one position's K and V in one layer
        cache.reserve(1, 17);
        QCOMPARE(cache.usedBlocks(), 2u);
        QCOMPARE(cache.allocatedBytesByLayer(), std::vector<std::uint64_t>(30, 2 * 16 * perLayer));
        QCOMPARE(cache.usedBytesByLayer(), std::vector<std::uint64_t>(30, 17 * perLayer));
        QCOMPARE(cache.usedBytes(), 17 * cache.kvBytesPerToken());
        // Layers of different shapes are counted each by its own size.
        KvCache mixed({100, 300}, 4, 8, 2, 4);
        mixed.reserve(1, 5);
        QCOMPARE(mixed.usedBytesByLayer(), (std::vector<std::uint64_t>{500, 1500}));
        QCOMPARE(mixed.allocatedBytesByLayer(), (std::vector<std::uint64_t>{800, 2400}));
        QCOMPARE(mixed.kvBytesPerToken(), std::uint64_t(400));
        // Prefix sharing: the full block is shared, the partial one is not.
        QCOMPARE(cache.forkPrefix(1, 2), 16u);
        QCOMPARE(cache.referenceCount(cache.blockTable(1)[0]), 2u);
        cache.reserve(2, 20);
        QCOMPARE(cache.usedBlocks(), 3u);
        QCOMPARE(cache.blockTable(2)[0], cache.blockTable(1)[0]);
        QVERIFY(cache.blockTable(2)[1] != cache.blockTable(1)[1]);
        cache.release(1);
        QCOMPARE(cache.usedBlocks(), 2u); // the shared block lives on in sequence 2
        QCOMPARE(cache.referenceCount(cache.blockTable(2)[0]), 1u);
        // Too long for a block table (4 blocks of 16), then a full cache.
        QVERIFY_THROWS_EXCEPTION(ComputeError, cache.reserve(3, 65));
        cache.reserve(4, 64);
        QCOMPARE(cache.freeBlocks(), 2u);
        QVERIFY_THROWS_EXCEPTION(ComputeError, cache.reserve(5, 48));
        cache.clear();
        QCOMPARE(cache.freeBlocks(), 8u);
    }

    void probesMatchTheReference() {
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        options.probes.kernelTimings = true;
        options.probes.residualMax = true;
        Engine engine(*llama_, options);
        const auto prompt = promptTokens(11, 300, 20);
        std::vector<std::vector<float>> expected(llama_->config.layers,
                                                 std::vector<float>(llama_->config.hiddenSize));
        models::ReferenceTransformer reference(llama_->config,
                                               models::dequantizeAll(llama_->weights), 2);
        reference.setResidualObserver(
            [&](std::uint32_t layer, std::uint32_t, std::span<const float> h) {
                for (std::size_t i = 0; i < h.size(); ++i)
                    expected[layer][i] = std::max(expected[layer][i], std::abs(h[i]));
            });
        auto cache = reference.newCache();
        reference.forward(prompt, cache);
        const auto result = engine.step({{1, prompt}});
        const auto& probes = result.probes;
        QCOMPARE(probes.residualMax.size(), expected.size());
        for (std::size_t l = 0; l < expected.size(); ++l) {
            for (std::size_t i = 0; i < expected[l].size(); ++i) {
                QVERIFY2(std::abs(probes.residualMax[l][i] - expected[l][i]) <=
                             2e-3f * (1 + expected[l][i]),
                         qPrintable(QString("layer %1 dim %2: %3 vs %4")
                                        .arg(l)
                                        .arg(i)
                                        .arg(probes.residualMax[l][i])
                                        .arg(expected[l][i])));
            }
        }
        // The planted outlier dimensions stand out in every layer.
        for (const auto& layer : probes.residualMax) {
            const float outlier = std::min(layer[3], layer[41]);
            float others = 0;
            for (std::size_t i = 0; i < layer.size(); ++i)
                if (i != 3 && i != 41) others = std::max(others, layer[i]);
            QVERIFY(outlier > others);
        }
        QCOMPARE(probes.prefillTokens, 11u);
        QCOMPARE(probes.dispatches, engine.dispatchesPerDecodeToken());
        if (engine.context().info().timestamps) {
            std::uint32_t timed = 0;
            for (const auto& k : probes.kernels) timed += k.dispatches;
            QCOMPARE(timed, probes.dispatches);
            QCOMPARE(probes.kernels.size(), std::size_t(8));
        }
        const auto& kv = engine.kvCache();
        QCOMPARE(probes.kvAllocatedBytesByLayer.size(), std::size_t(llama_->config.layers));
        for (std::uint32_t l = 0; l < llama_->config.layers; ++l) {
            const auto perPosition = kv.bytesPerPositionByLayer()[l];
            QCOMPARE(probes.kvAllocatedBytesByLayer[l], kv.blockSize() * perPosition);
            QCOMPARE(probes.kvUsedBytesByLayer[l], 11 * perPosition);
        }
        QCOMPARE(kv.kvBytesPerToken(), llama_->config.kvBytesPerToken(2));
        const auto memory = engine.memory();
        QVERIFY(memory.weightBytes > 0);
        QVERIFY(memory.peakDeviceBytes >= memory.deviceBytes);
        QVERIFY(memory.peakWithoutWeights() >= memory.kvReservedBytes + memory.activationBytes);
        checkValidation(engine);
    }

    // ProbeOptions::residualStream: every prompt row after every layer, read back from the
    // prefill itself, equals the CPU reference's residual stream (the logit tolerance of this
    // file, on values) and its max |h| is the fused probe's to the bit; split into chunks
    // (maxTokensPerStep) the rows still land in order. Off, it records nothing: no transfer,
    // and on or off the same dispatches.
    void residualStreamProbeCopiesThePrefillRows() {
        const auto& config = llama_->config;
        const auto prompt = promptTokens(11, 300, 20);
        std::vector<float> expected(std::size_t(config.layers) * prompt.size() * config.hiddenSize);
        models::ReferenceTransformer reference(config, llama_->weights, 2);
        reference.setResidualObserver(
            [&](std::uint32_t layer, std::uint32_t position, std::span<const float> h) {
                std::copy(h.begin(), h.end(),
                          expected.begin() +
                              std::ptrdiff_t((std::size_t(layer) * prompt.size() + position) *
                                             config.hiddenSize));
            });
        auto cache = reference.newCache();
        reference.forward(prompt, cache);

        for (std::uint32_t chunk : {256u, 4u}) {
            EngineOptions options;
            options.weightFormat = WeightFormat::F32;
            options.maxTokensPerStep = chunk;
            Engine engine(*llama_, options);
            const auto off = engine.step({{1, prompt}}).probes;
            QCOMPARE(off.transfers, 0u);
            QVERIFY(off.residualStream.empty());
            QCOMPARE(off.residualStreamRows, 0u);
            engine.release(1);

            engine.setProbes({.kernelTimings = false, .residualMax = true, .residualStream = true});
            const auto on = engine.step({{1, prompt}}).probes;
            QCOMPARE(on.dispatches, off.dispatches);
            const std::uint32_t chunks = (std::uint32_t(prompt.size()) + chunk - 1) / chunk;
            // One copy per layer and chunk, and the max probe's one fill.
            QCOMPARE(on.transfers, chunks * config.layers + 1);
            QCOMPARE(on.residualStreamRows, std::uint32_t(prompt.size()));
            QCOMPARE(on.residualStream.size(), expected.size());
            for (std::size_t i = 0; i < expected.size(); ++i)
                QVERIFY2(std::abs(on.residualStream[i] - expected[i]) <=
                             2e-3f * (1 + std::abs(expected[i])),
                         qPrintable(QString("value %1: %2 vs %3")
                                        .arg(i)
                                        .arg(on.residualStream[i])
                                        .arg(expected[i])));
            for (std::uint32_t l = 0; l < config.layers; ++l)
                for (std::uint32_t d = 0; d < config.hiddenSize; ++d) {
                    float largest = 0;
                    for (std::size_t p = 0; p < prompt.size(); ++p)
                        largest = std::max(
                            largest,
                            std::abs(on.residualStream[(l * prompt.size() + p) * config.hiddenSize +
                                                       d]));
                    QCOMPARE(on.residualMax[l][d], largest);
                }

            // A decode step with the probe still on records its one row; switched off again,
            // the next step records nothing.
            const std::int32_t token = 5;
            const auto decode = engine.step({{1, {token}}}).probes;
            QCOMPARE(decode.residualStreamRows, 1u);
            engine.setProbes({});
            const auto quiet = engine.step({{1, {token}}}).probes;
            QCOMPARE(quiet.transfers, 0u);
            QCOMPARE(quiet.dispatches, decode.dispatches);
            QVERIFY(quiet.residualStream.empty());
            checkValidation(engine);
        }
    }

    void allLogitsSplitAcrossSubmissions() {
        EngineOptions small;
        small.maxLogitRowsPerStep = 4; // 11 logit rows: three submissions
        small.maxTokensPerStep = 5;
        Engine split(*llama_, small);
        Engine whole(*llama_);
        const auto prompt = promptTokens(11, 300, 40);
        const auto a = split.step({{1, prompt}}, true);
        const auto b = whole.step({{1, prompt}}, true);
        QVERIFY(a.probes.submissions >= 3);
        QCOMPARE(b.probes.submissions, 1u);
        QCOMPARE(a.sequences[0].argmax, b.sequences[0].argmax);
        QVERIFY(compareLogits(a.sequences[0].logits, b.sequences[0].logits, 300, "split") <= 0.01);
        checkValidation(split);
    }

    void forkedPrefixGivesTheSameContinuation() {
        Engine engine(*llama_);
        const auto prompt = promptTokens(37, 300, 50);
        auto first = engine.step({{1, prompt}});
        const std::uint32_t usedBefore = engine.kvCache().usedBlocks();
        QCOMPARE(engine.forkSequence(1, 2), 32u); // two full blocks of 16, shared
        QCOMPARE(engine.kvCache().usedBlocks(), usedBefore);
        QCOMPARE(engine.kvCache().referenceCount(engine.kvCache().blockTable(1)[0]), 2u);
        // Sequence 2 recomputes only positions 32.. and then continues like sequence 1.
        std::vector<std::int32_t> rest(prompt.begin() + 32, prompt.end());
        const std::int32_t next = first.sequences[0].argmax[0];
        rest.push_back(next);
        const auto forked = engine.step({{2, rest}});
        const auto original = engine.step({{1, {next}}});
        QCOMPARE(forked.sequences[0].argmax, original.sequences[0].argmax);
        QVERIFY(compareLogits(forked.sequences[0].logits, original.sequences[0].logits, 300,
                              "fork") <= 0.01);
        QCOMPARE(engine.sequenceLength(2), 38u);
        engine.release(1);
        QCOMPARE(engine.kvCache().referenceCount(engine.kvCache().blockTable(2)[0]), 1u);
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.forkSequence(7, 8));
        checkValidation(engine);
    }

    void failedStepLeavesSequencesUntouched() {
        EngineOptions options;
        options.kvCapacityTokens = 32; // two blocks of 16
        Engine engine(*llama_, options);
        const auto prompt = promptTokens(20, 300, 30);
        const auto first = engine.step({{1, prompt}});
        QCOMPARE(engine.kvCache().usedBlocks(), 2u);
        // Sequence 1 grows within its blocks, sequence 2 finds the cache full: both roll back.
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.step({{1, {5}}, {2, {1, 2, 3}}}));
        QCOMPARE(engine.sequenceLength(1), 20u);
        QCOMPARE(engine.kvCache().length(1), 20u);
        QVERIFY(!engine.kvCache().contains(2));
        QCOMPARE(engine.kvCache().usedBlocks(), 2u);
        // And it continues exactly as a fresh run would.
        const auto next = engine.step({{1, {first.sequences[0].argmax[0]}}});
        Engine fresh(*llama_, options);
        auto expected = prompt;
        expected.push_back(first.sequences[0].argmax[0]);
        const auto reference = fresh.step({{1, expected}});
        QCOMPARE(next.sequences[0].argmax, reference.sequences[0].argmax);
        checkValidation(engine);
    }

    void rejectsBadInput() {
        Engine engine(*llama_);
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.step({{1, {300}}}));
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.step({{1, {}}}));
        QVERIFY_THROWS_EXCEPTION(ComputeError, engine.step({{1, {1}}, {1, {2}}}));
        checkValidation(engine);
    }

    void cleanupTestCase() { QCOMPARE(validationErrors_, 0u); }
};

QTEST_APPLESS_MAIN(VulkanEngineTest)
#include "test_vulkan_engine.moc"
