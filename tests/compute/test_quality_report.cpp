// Quality report (compute/experiments/quantization/QualityReport.hpp): the shipped factual battery
// parses and follows its rules, the scoring rule, the quantized weight substitution, and the whole
// report on a tiny in-memory model through the CPU reference.
#include "compute/engine/CpuBackend.hpp"
#include "compute/engine/Generation.hpp"
#include "compute/experiments/quantization/QualityReport.hpp"

#include "models/reference/Perplexity.hpp"

#include <QtTest>

#include <cmath>
#include <random>
#include <set>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

namespace {

models::ModelConfig tinyConfig() {
    models::ModelConfig c;
    c.architecture = "llama";
    c.name = "tiny";
    c.layers = 2;
    c.hiddenSize = 64;
    c.heads = 4;
    c.kvHeads = 2;
    c.headDim = 16;
    c.ffnSize = 128;
    c.vocabSize = 40;
    c.contextLength = 256;
    c.tiedEmbeddings = true;
    return c;
}

struct Arena {
    std::vector<std::vector<float>> buffers;
};

models::WeightStore tinyStore(const models::ModelConfig& c) {
    auto arena = std::make_shared<Arena>();
    models::WeightStore store;
    std::mt19937 generator(12);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto add = [&](const std::string& name, std::uint64_t rows, std::uint64_t cols, float sigma,
                   bool ones = false) {
        auto& data = arena->buffers.emplace_back(rows * cols);
        for (auto& x : data) x = ones ? 1.0f : sigma * normal(generator);
        models::StoredTensor t;
        t.name = name;
        t.shape =
            cols == 1 ? std::vector<std::uint64_t>{rows} : std::vector<std::uint64_t>{cols, rows};
        t.data = {reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * 4};
        store.add(std::move(t));
    };
    const std::uint64_t h = c.hiddenSize, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
    add("token_embd.weight", c.vocabSize, h, 0.15f); // logits of order 1: perplexity near vocab
    add("output_norm.weight", h, 1, 0, true);
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", h, 1, 0, true);
        add(p + "ffn_norm.weight", h, 1, 0, true);
        add(p + "attn_q.weight", q, h, 0.1f);
        add(p + "attn_k.weight", kv, h, 0.1f);
        add(p + "attn_v.weight", kv, h, 0.1f);
        add(p + "attn_output.weight", h, q, 0.1f);
        add(p + "ffn_gate.weight", c.ffnSize, h, 0.1f);
        add(p + "ffn_up.weight", c.ffnSize, h, 0.1f);
        add(p + "ffn_down.weight", h, c.ffnSize, 0.1f);
    }
    store.setOwner(arena);
    return store;
}

std::string decodeIds(std::span<const std::int32_t> ids) {
    std::string text;
    for (auto id : ids) text += (text.empty() ? "t" : " t") + std::to_string(id);
    return text;
}

} // namespace

class TestQualityReport : public QObject {
    Q_OBJECT
private slots:
    void shippedBatteryFollowsItsRules() {
        const auto battery = loadFactualBattery(std::filesystem::path(INFERSCOPE_SOURCE_DIR) /
                                                "resources" / "factual-battery.json");
        QCOMPARE(battery.questions.size(), std::size_t(16));
        QCOMPARE(battery.maxNewTokens, 48);
        std::set<std::string> ids;
        for (const auto& q : battery.questions) {
            QVERIFY(!q.question.empty() && q.question.back() == '?');
            QVERIFY(!q.accepted.empty());
            ids.insert(q.id);
        }
        QCOMPARE(ids.size(), std::size_t(16));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseFactualBattery("{"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 parseFactualBattery(R"({"questions": []})"));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            parseFactualBattery(R"({"questions": [{"question": "Q?", "accepted": ["Paris"]}]})"));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            parseFactualBattery(R"({"questions": [{"question": "Q?", "accepted": []}]})"));
    }

    void scoringRule() {
        const std::vector<std::string> gold = {"au"};
        QVERIFY(answerAccepted("The chemical symbol for gold is Au.", gold));
        QVERIFY(answerAccepted("AU", gold));
        QVERIFY(!answerAccepted("Because it is shiny", gold));
        QVERIFY(!answerAccepted("", gold));
        const std::vector<std::string> seven = {"seven", "7"};
        QVERIFY(answerAccepted("There are 7 days.", seven));
        QVERIFY(!answerAccepted("There are 17 of them", seven));
        QVERIFY(answerAccepted("Seventeen? No: seven.", seven)); // a later whole-word occurrence
        QVERIFY(!answerAccepted("seventeen", seven));
        const std::vector<std::string> co2 = {"carbon dioxide"};
        QVERIFY(answerAccepted("Plants absorb Carbon Dioxide (CO2).", co2));
    }

    void quantizedWeightsReplaceOnlyProjections() {
        const auto config = tinyConfig();
        const auto store = tinyStore(config);
        const auto exact = quantizedReferenceWeights(store, models::parseQuantScheme("as-stored"));
        QVERIFY(exact == models::dequantizeAll(store));
        const auto int4 = quantizedReferenceWeights(store, models::parseQuantScheme("int4-tensor"));
        QVERIFY(int4.at("token_embd.weight") == exact.at("token_embd.weight"));
        QVERIFY(int4.at("blk.0.attn_norm.weight") == exact.at("blk.0.attn_norm.weight"));
        QVERIFY(int4.at("blk.1.ffn_down.weight") != exact.at("blk.1.ffn_down.weight"));
        std::set<float> levels(int4.at("blk.1.ffn_down.weight").begin(),
                               int4.at("blk.1.ffn_down.weight").end());
        QVERIFY(levels.size() <= 15);
    }

    void reportOnATinyModel() {
        const auto config = tinyConfig();
        const auto store = tinyStore(config);
        auto factory = [&](models::ReferenceWeights weights) {
            auto reference =
                std::make_shared<const models::ReferenceTransformer>(config, std::move(weights), 1);
            return std::unique_ptr<DecoderBackend>(std::make_unique<CpuBackend>(reference, true));
        };
        QualityInputs inputs;
        inputs.schemes = {models::parseQuantScheme("as-stored"),
                          models::parseQuantScheme("int8-row"),
                          models::parseQuantScheme("int4-tensor")};
        std::mt19937 generator(3);
        for (int i = 0; i < 64; ++i)
            inputs.perplexityTokens.push_back(std::int32_t(generator() % 40));
        inputs.context = 16;
        inputs.maxNewTokens = 4;
        inputs.decode = decodeIds;
        inputs.agreementTokens = 10; // 5 + 5 over two prompts
        // Accepted answers: the full-precision model's own first greedy token, so it scores
        // 2 of 2 without a penalty.
        const std::vector<std::vector<std::int32_t>> prompts = {{1, 2, 3, 4}, {9, 8, 7}};
        for (const auto& ids : prompts) {
            auto backend = factory(models::dequantizeAll(store));
            GenerationOptions options;
            options.maxNewTokens = 1;
            const auto result = generate(*backend, ids, options);
            inputs.battery.push_back({ids, {decodeIds(result.generatedIds)}});
        }
        const auto backends = referenceSchemeBackends(config, store, 1);
        const auto tables = qualityReport(store, inputs, *backends);
        QCOMPARE(tables.size(), std::size_t(2)); // the quality table and its ranking
        const Table& t = tables[0];
        QCOMPARE(t.rows.size(), std::size_t(3));
        QCOMPARE(t.number(0, "bits/weight"), 32.0);
        // int4-tensor: 4 bits plus one fp16 scale for each of the 14 matrices.
        const double parameters = 2 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 128 * 64);
        QVERIFY(std::fabs(t.number(2, "bits/weight") - (4.0 + 14 * 16.0 / parameters)) < 1e-12);
        QCOMPARE(t.number(0, "battery, no penalty"), 2.0);
        QCOMPARE(t.number(0, "agreement"), 100.0);
        QCOMPARE(t.number(0, "agreeing"), 10.0);
        QCOMPARE(t.number(0, "of"), 10.0);
        for (std::size_t r = 0; r < 3; ++r) {
            QVERIFY(std::isfinite(t.number(r, "perplexity")) && t.number(r, "perplexity") > 1.0);
            QVERIFY(t.number(r, "agreeing") <= t.number(r, "of"));
        }
        // Fine INT8 stays close to full precision; one 4-bit scale per tensor moves further.
        const double exactPpl = t.number(0, "perplexity");
        QVERIFY(std::fabs(t.number(1, "perplexity") - exactPpl) / exactPpl < 0.02);
        QVERIFY(std::fabs(t.number(2, "perplexity") - exactPpl) >
                std::fabs(t.number(1, "perplexity") - exactPpl));
        // The same perplexity as computed directly on the unquantized model.
        auto backend = factory(models::dequantizeAll(store));
        models::PerplexityOptions options;
        options.context = 16;
        const auto direct =
            models::computePerplexity(inputs.perplexityTokens, config.vocabSize, options,
                                      [&](std::span<const std::int32_t> window) {
                                          backend->reset();
                                          return backend->appendAllLogits(window);
                                      });
        QCOMPARE(t.number(0, "perplexity"), direct.perplexity);
        QCOMPARE(direct.tokenNll.size(), std::size_t(direct.scoredTokens));
        double sum = 0;
        for (double nll : direct.tokenNll) sum += nll;
        QVERIFY(std::fabs(sum / double(direct.tokenNll.size()) - direct.meanNll) < 1e-12);
        // The ranking: the same perplexities, the lowest called so, the rest measured from it.
        const Table& ranking = tables[1];
        QCOMPARE(ranking.id, std::string("quality-ranking"));
        QCOMPARE(ranking.rows.size(), std::size_t(3));
        std::size_t lowest = 0;
        for (std::size_t r = 0; r < 3; ++r) {
            QCOMPARE(ranking.number(r, "perplexity"), t.number(r, "perplexity"));
            if (t.number(r, "perplexity") < t.number(lowest, "perplexity")) lowest = r;
            QVERIFY(ranking.number(r, "above lowest") >= -1e-9);
            QVERIFY(ranking.number(r, "noise") >= 0);
        }
        QCOMPARE(std::get<std::string>(ranking.at(lowest, "verdict")), std::string("lowest"));
        QCOMPARE(ranking.number(lowest, "above lowest"), 0.0);
        QVERIFY(!ranking.notes.empty());
        QCOMPARE(t.notes.back(), "ran on " + backends->description());
    }
};

QTEST_APPLESS_MAIN(TestQualityReport)
#include "test_quality_report.moc"
