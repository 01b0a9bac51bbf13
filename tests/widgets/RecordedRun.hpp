#pragma once
// A recorded run, written out by hand so every number the panels draw is known: a
// SmolLM2-shaped model (30 layers, 3 KV heads of 64), 12 prompt tokens, 6 generated.
#include "compute/experiments/run/ModelInfo.hpp"
#include "compute/session/LoadFootprint.hpp"
#include "widgets/RunRecords.hpp"

#include <QCoreApplication>
#include <QDir>
#include <cmath>
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
    // What the load took on a 1 GiB device: 96 MiB of weights, 4 MiB of KV cache.
    compute::LoadFootprint footprint;
    footprint.backend = "vulkan";
    footprint.weightFormat = "q4_1";
    footprint.device = "recorded device";
    footprint.parts = {{"weights (q4_1)", 96ull << 20, 0},
                       {"KV cache (4,096 positions, fp16)", 4ull << 20, 0},
                       {"largest upload transient (token_embd)", 0, 2ull << 20}};
    footprint.deviceAvailableBytes = 1ull << 30;
    footprint.hostAvailableBytes = 8ull << 30;
    m->footprint = compute::loadFootprintTable(footprint);
    return m;
}

// The recorded run as the Vulkan engine reports it: fp16 K and V (23,040 B per token) in
// blocks of 16 positions, and the kernels of the prefill, of the last decode step and summed
// over every decode step.
inline std::shared_ptr<const inferscope::widgets::RunRecord> gpuRun() {
    auto r = std::make_shared<inferscope::widgets::RunRecord>(*run());
    r->backend = "recorded gpu";
    r->kvBlockSize = 16;
    r->kvCapacityBlocks = 256;
    r->kvSamples.clear();
    for (std::int64_t t = kPromptTokens; t <= kPromptTokens + 5; ++t) {
        const std::uint32_t blocks = static_cast<std::uint32_t>((t + 15) / 16);
        r->kvSamples.push_back({t, static_cast<std::uint64_t>(23040 * t),
                                static_cast<std::uint64_t>(23040) * 16 * blocks, blocks});
    }
    r->kvUsedPerLayer.assign(30, 768 * 17); // 2 x 3 x 64 x 2 B per token and layer
    r->kvAllocatedPerLayer.assign(30, 768 * 32);
    r->prefillKernels = {{"embed", 1, 20.0},
                         {"qkv_rope", 30, 900.0},
                         {"attention", 30, 300.0},
                         {"ffn_down", 30, 600.0},
                         {"lm_head", 1, 400.0}};
    r->decodeKernels = {{"embed", 1, 5.0},
                        {"qkv_rope", 30, 150.0},
                        {"attention", 30, 45.0},
                        {"ffn_down", 30, 200.0},
                        {"lm_head", 1, 100.0}};
    // Summed over the 5 decode steps: the last step above is not the typical one.
    r->decodeKernelsTotal = {{"embed", 5, 26.0},
                             {"qkv_rope", 150, 760.0},
                             {"attention", 150, 215.0},
                             {"ffn_down", 150, 1010.0},
                             {"lm_head", 5, 498.0}};
    return r;
}

// Cached vs uncached over 5 tokens: the uncached steps grow, the tokens agree.
inline std::shared_ptr<const inferscope::widgets::CachingComparison> comparison() {
    auto c = std::make_shared<inferscope::widgets::CachingComparison>();
    c->backend = "recorded";
    c->promptTokens = kPromptTokens;
    c->cachedPrefillSeconds = 0.040;
    c->uncachedPrefillSeconds = 0.040;
    c->cachedStepSeconds = {0.010, 0.010, 0.010, 0.010};
    c->uncachedStepSeconds = {0.043, 0.046, 0.049, 0.052};
    c->cachedTokens = {5, 6, 7, 8, 9};
    c->uncachedTokens = {5, 6, 7, 8, 9};
    return c;
}

// 2 layers x 4 positions x 8 dimensions. Dimension 0 is the outlier (100, -100, 50, 0);
// dimension d in 1..7 takes (-1, -0.5, 0.5, 1) x d / 7; layer 1 is layer 0 doubled.
inline std::shared_ptr<const inferscope::widgets::ActivationRecord> recordedStream() {
    auto recording = std::make_shared<inferscope::compute::ResidualRecording>();
    recording->layers = 2;
    recording->positions = 4;
    recording->hidden = 8;
    const float outlier[4] = {100.0f, -100.0f, 50.0f, 0.0f}, small[4] = {-1.0f, -0.5f, 0.5f, 1.0f};
    auto a = std::make_shared<inferscope::widgets::ActivationRecord>();
    a->positions = 4;
    for (int layer = 0; layer < 2; ++layer) {
        std::vector<float> maxAbs(8, 0.0f);
        for (int p = 0; p < 4; ++p)
            for (int d = 0; d < 8; ++d) {
                float v = float(layer + 1) * (d == 0 ? outlier[p] : small[p] * float(d) / 7.0f);
                recording->values.push_back(v);
                maxAbs[std::size_t(d)] = std::max(maxAbs[std::size_t(d)], std::fabs(v));
            }
        a->maxAbsPerLayer.push_back(maxAbs);
    }
    a->recording = recording;
    return a;
}

// The quantization lab's two reports for three schemes, by hand.
inline std::vector<inferscope::compute::Table> weightTables() {
    inferscope::compute::Table t;
    t.id = "weight-error";
    t.title = "Weight error";
    t.addColumn("scheme")
        .addColumn("bits/weight")
        .addColumn("mean error")
        .addColumn("median error");
    t.addColumn("worst error").addColumn("worst matrix");
    t.addRow({std::string("fp16"), 16.0, 0.0002, 0.0002, 0.0003, std::string("blk.0.attn_q")});
    t.addRow({std::string("int8-row"), 8.25, 0.004, 0.004, 0.006, std::string("blk.3.ffn_down")});
    t.addRow({std::string("int4-tensor"), 4.0, 0.25, 0.2, 0.9, std::string("blk.3.ffn_down")});
    return {t};
}

inline std::vector<inferscope::compute::Table> qualityTables() {
    inferscope::compute::Table t;
    t.id = "quality";
    t.title = "Quality";
    t.addColumn("scheme").addColumn("bits/weight").addColumn("perplexity", "", 2);
    t.addColumn("battery (penalty 1.1)").addColumn("agreement", "%", 1).addColumn("agreeing");
    t.addColumn("of");
    t.addRow({std::string("fp16"), 16.0, 9.5, std::int64_t{10}, 99.3, std::int64_t{143},
              std::int64_t{144}});
    t.addRow({std::string("int4-tensor"), 4.0, 31.0, std::int64_t{2}, 61.1, std::int64_t{88},
              std::int64_t{144}});
    return {t};
}

// Where tests leave screenshots for people to look at: <build>/tests/artifacts.
inline QString artifactDirectory() {
    QDir dir(QCoreApplication::applicationDirPath());
    dir.mkpath("artifacts");
    return dir.filePath("artifacts");
}

} // namespace recorded
