// The real default model (SmolLM2-135M-Instruct, Q4_1 GGUF) on the GPU engine: greedy
// continuations of the fixture prompts must equal the CPU reference's token for token
// (both from the same f32-dequantized weights: the engine runs them as f32 here), and the
// throughput of the engine with f16 and with Q8_0 weights is measured and printed
// (pp128 / tg32 style).
#include "compute/engine/Engine.hpp"
#include "compute/experiments/bench/Bench.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"

#include "tests/DefaultModel.hpp"
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cstdlib>
#include <memory>
#include <thread>

using namespace inferscope;
using namespace inferscope::compute;

class SlowEngineDefaultTest : public QObject {
    Q_OBJECT

    std::unique_ptr<models::LoadedModel> model_;

    std::vector<std::vector<std::int32_t>> fixturePrompts(std::size_t count) {
        QFile file(INFERSCOPE_TEST_DATA "/reference-smollm2.json");
        if (!file.open(QIODevice::ReadOnly)) return {};
        const auto greedy = QJsonDocument::fromJson(file.readAll()).object()["greedy"].toArray();
        std::vector<std::vector<std::int32_t>> prompts;
        for (const auto& entry : greedy) {
            std::vector<std::int32_t> ids;
            for (const auto& id : entry.toObject()["promptIds"].toArray())
                ids.push_back(id.toInt());
            if (!ids.empty()) prompts.push_back(ids);
            if (prompts.size() == count) break;
        }
        return prompts;
    }

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        model_ = std::make_unique<models::LoadedModel>(models::loadModel(path));
    }

    void greedyTokensEqualReference() {
        const auto prompts = fixturePrompts(3);
        QVERIFY(prompts.size() >= 2);
        const auto weights = models::dequantizeAll(model_->weights);
        models::ReferenceTransformer reference(model_->config, weights, 2);
        EngineOptions options;
        options.weightFormat = WeightFormat::F32;
        Engine engine(model_->config, weights, options);
        SequenceId id = 1;
        for (const auto& prompt : prompts) {
            auto cache = reference.newCache();
            auto cpuLogits = reference.forward(prompt, cache);
            auto gpu = engine.step({{id, prompt}});
            std::vector<std::int32_t> cpuTokens, gpuTokens;
            for (int i = 0; i < 32; ++i) {
                const auto cpuNext = std::int32_t(
                    std::max_element(cpuLogits.begin(), cpuLogits.end()) - cpuLogits.begin());
                cpuTokens.push_back(cpuNext);
                gpuTokens.push_back(gpu.sequences[0].argmax[0]);
                // Each side continues with its own choice: a divergence shows as a mismatch.
                cpuLogits = reference.forward(std::vector<std::int32_t>{cpuNext}, cache);
                gpu = engine.step({{id, {gpu.sequences[0].argmax[0]}}});
            }
            QCOMPARE(gpuTokens, cpuTokens);
            engine.release(id++);
        }
        QCOMPARE(engine.context().validationLog().errors(), 0u);
    }

    void throughputOfTheDefaultEngine() {
        for (auto format : {WeightFormat::F16, WeightFormat::Q8_0}) {
            EngineOptions engineOptions;
            engineOptions.weightFormat = format;
            Engine engine(*model_, engineOptions);
            const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
            for (std::uint32_t batch : {1u}) {
                BenchOptions options;
                options.promptTokens = 128;
                options.decodeTokens = 32;
                options.batch = batch;
                const auto result = runBench(engine, options);
                qInfo("%s %s batch %u: pp%u %.1f tok/s, tg%u %.1f tok/s (%.2f ms/step, %u "
                      "dispatches, "
                      "%.2f GB/s of weights)",
                      result.device.c_str(), result.weightFormat.c_str(), batch,
                      result.promptTokens, result.promptTokensPerSecond, result.decodeTokens,
                      result.decodeTokensPerSecond, result.decodeStepMilliseconds,
                      result.dispatchesPerDecodeStep, result.decodeWeightGigabytesPerSecond);
                qInfo("  cpu time: prefill %.3f s, decode %.3f s (per token %.2f ms); with %u idle "
                      "cores at best: pp %.1f tok/s, tg %.1f tok/s",
                      result.promptCpuSeconds, result.decodeCpuSeconds,
                      result.decodeCpuSeconds * 1000 / result.decodeTokens, cores,
                      result.promptTokens * cores / result.promptCpuSeconds,
                      result.decodeTokens * cores / result.decodeCpuSeconds);
                for (const auto& k : result.decodeKernels) {
                    qInfo("  decode %-12s %3u dispatches %9.1f us", k.kernel.c_str(), k.dispatches,
                          k.microseconds);
                }
                for (const auto& k : result.prefillKernels) {
                    qInfo("  prefill %-12s %3u dispatches %9.1f us", k.kernel.c_str(), k.dispatches,
                          k.microseconds);
                }
                QVERIFY(result.promptTokensPerSecond > 0);
                QVERIFY(result.decodeTokensPerSecond > 0);
                QCOMPARE(result.dispatchesPerDecodeStep, engine.dispatchesPerDecodeToken());
            }
            QCOMPARE(engine.context().validationLog().errors(), 0u);
        }
    }
};

QTEST_APPLESS_MAIN(SlowEngineDefaultTest)
#include "test_slow_engine_default.moc"
