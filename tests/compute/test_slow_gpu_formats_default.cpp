// The GPU weight formats on the real default model (SmolLM2-135M-Instruct, Q4_1 GGUF with a
// Q8_0 token_embd that is also the tied output head):
// - "as stored" runs every matrix in the file's own type (Q4_1 codes as they are, the tied
//   head from the Q8_0 bytes), and its greedy continuations equal the CPU reference's on the
//   file's values. The GPU looks embeddings up in an f16 copy of the table, the reference in
//   the exact one: the top-1 token must still agree at every step.
// - a run-time switch re-packs from the kept host weights (no file read); the time per switch
//   and the bits per weight the kernels read per format are printed, and int4-g128 costs what
//   the host packer says: 4 bits of code and an fp16 scale per 128 weights (4.125 bits plus a
//   few padding words), or, where the kernels read lane-scale copies (lavapipe), an fp16 scale
//   per row and 64 columns in place of the packed ones (4.25).
#include "compute/engine/Engine.hpp"
#include "compute/formats/GpuWeightPacking.hpp"
#include "models/LoadedModel.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "tests/DefaultModel.hpp"

#include <QtTest>

#include <chrono>
#include <memory>

using namespace inferscope;
using namespace inferscope::compute;

class SlowGpuFormatsDefaultTest : public QObject {
    Q_OBJECT

    std::unique_ptr<models::LoadedModel> model_;

private slots:
    void initTestCase() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        model_ = std::make_unique<models::LoadedModel>(models::loadModel(path));
    }

    void asStoredKeepsTheFilesTypes() {
        EngineOptions options;
        options.weightFormat = WeightFormat::AsStored;
        Engine engine(*model_, options);
        const auto& store = model_->weights;
        for (const auto& info : engine.weightMatrices()) {
            if (info.name == "token_embd") {
                QCOMPARE(info.format, WeightFormat::F16);
                continue;
            }
            const std::string tensor =
                info.name == "output (tied)" ? "token_embd.weight"
                : info.name.ends_with("attn_qkv")
                    ? info.name.substr(0, info.name.size() - 3) + "q.weight"
                : info.name.ends_with("ffn_gateup")
                    ? info.name.substr(0, info.name.size() - 6) + "gate.weight"
                    : info.name + ".weight";
            QVERIFY2(store.contains(tensor), tensor.c_str());
            QCOMPARE(info.format, formatForStoredType(store.at(tensor).type));
        }
        QCOMPARE(engine.weightMatrices().back().name, std::string("output (tied)"));
        QCOMPARE(engine.weightMatrices().back().format, WeightFormat::Q8_0);
        // The label names what the file gave: Q4_1 layers, the tied Q8_0 head.
        QCOMPARE(engine.weightFormatLabel(), std::string("as-stored: q4_1 + q8_0"));

        models::ReferenceTransformer reference(model_->config,
                                               models::dequantizeAll(model_->weights), 2);
        const std::vector<std::int32_t> prompt = {1, 9690, 198, 2683, 359, 253, 5356, 5646, 30};
        auto cache = reference.newCache();
        auto cpuLogits = reference.forward(prompt, cache);
        auto gpu = engine.step({{1, prompt}});
        std::vector<std::int32_t> cpuTokens, gpuTokens;
        for (int i = 0; i < 12; ++i) {
            const auto cpuNext = std::int32_t(std::max_element(cpuLogits.begin(), cpuLogits.end()) -
                                              cpuLogits.begin());
            cpuTokens.push_back(cpuNext);
            gpuTokens.push_back(gpu.sequences[0].argmax[0]);
            cpuLogits = reference.forward(std::vector<std::int32_t>{cpuNext}, cache);
            gpu = engine.step({{1, {gpu.sequences[0].argmax[0]}}});
        }
        QCOMPARE(gpuTokens, cpuTokens);
        QCOMPARE(engine.context().validationLog().errors(), 0u);
    }

    void switchingFormatsAtRunTime() {
        Engine engine(*model_, {});
        const std::vector<std::int32_t> prompt = {1, 9690, 198, 2683, 359, 253, 5356};
        const bool laneScales = KernelTuning::forDevice(engine.context().info()).readsLaneScales();
        for (auto format :
             {WeightFormat::Int8Tensor, WeightFormat::Int8Row, WeightFormat::Int4Tensor,
              WeightFormat::Int4Row, WeightFormat::Int4G128, WeightFormat::Int4G64,
              WeightFormat::Nf4, WeightFormat::Q8_0, WeightFormat::Q4_0, WeightFormat::Q4_1,
              WeightFormat::AsStored, WeightFormat::F16}) {
            const auto start = std::chrono::steady_clock::now();
            engine.setWeightFormat(format);
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::uint64_t bytes = 0, parameters = 0;
            for (const auto& info : engine.weightMatrices()) {
                if (info.name == "token_embd") continue; // the lookup table, not read per step
                bytes += info.bytesRead;
                parameters += info.parameters;
            }
            const double bits = 8.0 * double(bytes) / double(parameters);
            qInfo("%-12s switch %.2f s; matrices read per token %.1f MB, %.4f bits/weight; all "
                  "weights on the GPU %.1f MB",
                  std::string(weightFormatName(format)).c_str(), seconds, bytes / 1e6, bits,
                  engine.memory().weightBytes / 1e6);
            if (format == WeightFormat::Int4G128) {
                const double expected = laneScales ? 4.25 : 4.125;
                QVERIFY2(bits >= expected && bits < expected + 0.005,
                         qPrintable(QString::number(bits)));
            }
            if (format == WeightFormat::Int8Row) QVERIFY(bits > 8.0 && bits < 8.03);
            const auto step = engine.step({{1, prompt}});
            QVERIFY(step.sequences[0].argmax[0] >= 0);
            engine.release(1);
        }
        QCOMPARE(engine.context().validationLog().errors(), 0u);
    }
};

QTEST_APPLESS_MAIN(SlowGpuFormatsDefaultTest)
#include "test_slow_gpu_formats_default.moc"
