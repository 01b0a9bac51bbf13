#pragma once
// A recorded run, written out by hand so every number the panels draw is known: a
// SmolLM2-shaped model (30 layers, 3 KV heads of 64), 12 prompt tokens, 6 generated.
#include "compute/experiments/ModelInfo.hpp"
#include "widgets/RunRecords.hpp"

#include <QCoreApplication>
#include <QDir>
#include <memory>

namespace recorded {

inline inferscope::models::ModelConfig smolConfig() {
    inferscope::models::ModelConfig c;
    c.architecture = "llama";
    c.name = "SmolLM2-shaped";
    c.layers = 30;
    c.hiddenSize = 576;
    c.heads = 9;
    c.kvHeads = 3;
    c.headDim = 64;
    c.ffnSize = 1536;
    c.vocabSize = 49152;
    c.contextLength = 8192;
    return c;
}

constexpr std::int64_t kPromptTokens = 12;
constexpr double kPrefillSeconds = 0.048;
// The third step is recorded as 0 s: a log axis must still draw it (clamped), not drop the series.
inline const std::vector<double> kStepSeconds = {0.010, 0.0105, 0.0, 0.0112, 0.0098};

inline std::shared_ptr<const inferscope::widgets::RunRecord> run() {
    auto r = std::make_shared<inferscope::widgets::RunRecord>();
    r->backend = "recorded";
    r->config = smolConfig();
    r->promptTokens = kPromptTokens;
    r->generatedTokens = static_cast<std::int64_t>(kStepSeconds.size()) + 1;
    r->prefillSeconds = kPrefillSeconds;
    r->stepSeconds = kStepSeconds;
    // fp32 K and V, as the CPU reference holds them: 2 x 30 x 3 x 64 x 4 = 46,080 B per token.
    for (std::int64_t t = kPromptTokens; t <= kPromptTokens + 5; ++t)
        r->kvSamples.push_back({t, static_cast<std::uint64_t>(46080 * t)});
    r->finished = true;
    return r;
}

// The same run cut after its first two decode steps, as streaming sends it.
inline std::shared_ptr<const inferscope::widgets::RunRecord> partialRun() {
    auto r = std::make_shared<inferscope::widgets::RunRecord>(*run());
    r->stepSeconds.resize(2);
    r->kvSamples.resize(3);
    r->generatedTokens = 3;
    r->finished = false;
    return r;
}

// 3 layers x 64 dimensions; dimensions 5 and 17 planted at 100 and 400 in every layer,
// dimension 9 exactly 0, the rest between 0.5 and 2.
inline std::shared_ptr<const inferscope::widgets::ActivationRecord> activations() {
    auto a = std::make_shared<inferscope::widgets::ActivationRecord>();
    a->positions = 12;
    for (int layer = 0; layer < 3; ++layer) {
        std::vector<float> values(64);
        for (int d = 0; d < 64; ++d) values[d] = 0.5f + 1.5f * float((d * 7 + layer) % 64) / 63.0f;
        values[5] = 100.0f * float(layer + 1);
        values[17] = 400.0f;
        values[9] = 0.0f;
        a->maxAbsPerLayer.push_back(values);
    }
    return a;
}

inline std::shared_ptr<const inferscope::widgets::ModelRecord> model() {
    namespace compute = inferscope::compute;
    auto m = std::make_shared<inferscope::widgets::ModelRecord>();
    m->path = "/models/smol.gguf";
    m->config = smolConfig();
    m->info.id = "model-info";
    m->info.title = "Model: SmolLM2-shaped";
    m->info.addColumn("property").addColumn("value");
    m->info.addRow({std::string("architecture"), std::string("llama")});
    m->info.addRow({std::string("layers"), std::int64_t{30}});
    m->weightBytes.id = "weight-bytes";
    m->weightBytes.title = "Stored weights by tensor type";
    m->weightBytes.addColumn("type")
        .addColumn("parameters")
        .addColumn("bytes", "bytes")
        .addColumn("bits per weight");
    m->weightBytes.addRow({std::string("F32"), std::int64_t{1048576}, std::int64_t{4194304}, 32.0});
    m->weightBytes.addRow({std::string("Q4_1"), std::int64_t{8388608}, std::int64_t{5242880}, 5.0});
    m->weightBytes.addRow(
        {std::string("total"), std::int64_t{9437184}, std::int64_t{9437184}, 8.0});
    m->kvCache = compute::experiments::kvCacheBytes(m->config);
    return m;
}

// Where tests leave screenshots for people to look at: <build>/tests/artifacts.
inline QString artifactDirectory() {
    QDir dir(QCoreApplication::applicationDirPath());
    dir.mkpath("artifacts");
    return dir.filePath("artifacts");
}

} // namespace recorded
