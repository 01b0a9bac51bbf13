// Chapter item 14: the memory budget's formulas against hand-computed chapter rows, the
// shipped presets, and bad preset files refused with one error naming the field.
#include "compute/experiments/budget/MemoryBudget.hpp"

#include <QtTest>

using namespace inferscope::compute::experiments;

namespace {

ModelShape chapterModel() {
    ModelShape s;
    s.name = "chapter";
    s.layers = 24;
    s.heads = 14;
    s.kvHeads = 2;
    s.headDim = 64;
    s.parameters = 494032768;
    return s;
}

const ModelShape& preset(const std::vector<ModelShape>& all, const char* prefix) {
    for (const auto& s : all)
        if (s.name.rfind(prefix, 0) == 0) return s;
    throw std::runtime_error(std::string("no preset ") + prefix);
}

void expectRefused(const std::string& json, const std::string& mentions) {
    try {
        parseModelPresets(json, "test.json");
        QFAIL(("accepted: " + json).c_str());
    } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        if (message.find(mentions) == std::string::npos)
            QFAIL(("error '" + message + "' does not mention '" + mentions + "'").c_str());
    }
}

} // namespace

class TestMemoryBudget : public QObject {
    Q_OBJECT
private slots:
    void kvBytesPerTokenMatchesTheChapter() {
        const auto s = chapterModel();
        QCOMPARE(kvBytesPerToken(s, 2.0), std::uint64_t(12288)); // 2 x 24 x 2 x 64 x 2
        // Full multi-head attention: seven times more (14 query heads / 2 KV heads).
        QCOMPARE(kvBytesPerToken(withVariant(s, KvVariant::MultiHead), 2.0), std::uint64_t(86016));
        QCOMPARE(kvBytesPerToken(withVariant(s, KvVariant::MultiQuery), 2.0), std::uint64_t(6144));
        QCOMPARE(kvBytesPerToken(s, 0.5), std::uint64_t(3072));

        const auto presets = shippedModelPresets();
        QCOMPARE(kvBytesPerToken(preset(presets, "7B"), 2.0), std::uint64_t(128 * 1024));
        QCOMPARE(kvBytesPerToken(preset(presets, "13B"), 2.0), std::uint64_t(800 * 1024));
        QCOMPARE(kvBytesPerToken(preset(presets, "70B"), 2.0), std::uint64_t(320 * 1024));
        QCOMPARE(preset(presets, "Qwen2.5-0.5B").parameters, chapterModel().parameters);
    }

    // Gemma 3's windowed layers keep 512 tokens: past that a token adds only the 3 global
    // layers' bytes, and the budget counts it so; Qwen3 (no window) is the plain formula.
    void windowedLayersStopGrowingInTheBudget() {
        const auto presets = shippedModelPresets();
        const auto& gemma = preset(presets, "Gemma-3-270M");
        QCOMPARE(gemma.windowedLayers, 15u);
        QCOMPARE(gemma.slidingWindow, 512u);
        const std::uint64_t perLayer = 2 * 1 * 256 * 2; // K and V, 1 KV head of 256, fp16
        QCOMPARE(kvBytesPerToken(gemma, 2.0), 18 * perLayer);
        QCOMPARE(kvBytesForTokens(gemma, 2.0, 100), 18 * 100 * perLayer);
        QCOMPARE(kvBytesForTokens(gemma, 2.0, 4096), (3 * 4096 + 15 * 512) * perLayer);
        // 1 GiB for KV (no weights, no reserve): the window's 18 x 512 tokens, then 3 layers.
        const std::uint64_t gib = 1ull << 30;
        const auto s = solveBudget(gib, 0, gemma, 2.0, 0, 4096);
        const std::int64_t expected =
            512 + std::int64_t((gib - 18 * 512 * perLayer) / (3 * perLayer));
        QCOMPARE(s.contextTokens, expected);
        QCOMPARE(s.users, std::int64_t(gib / ((3 * 4096 + 15 * 512) * perLayer)));
        // Without the window the same bytes hold 6x fewer tokens past the window.
        ModelShape global = gemma;
        global.windowedLayers = 0;
        const auto plain = solveBudget(gib, 0, global, 2.0, 0, 4096);
        QCOMPARE(plain.contextTokens, std::int64_t(gib / (18 * perLayer)));
        QVERIFY(s.contextTokens > 5 * plain.contextTokens);

        const auto& qwen = preset(presets, "Qwen3-0.6B");
        QCOMPARE(kvBytesPerToken(qwen, 2.0), std::uint64_t(114688)); // 2 x 28 x 8 x 128 x 2
        const auto q = solveBudget(gib, 0, qwen, 2.0, 0, 4096);
        QCOMPARE(q.contextTokens, std::int64_t(gib / 114688));
        expectRefused(R"({"presets": [{"name": "x", "layers": 2, "heads": 2, "kv_heads": 1,
                         "head_dim": 8, "parameters": 10, "windowed_layers": 1}]})",
                      "go together");
        expectRefused(R"({"presets": [{"name": "x", "layers": 2, "heads": 2, "kv_heads": 1,
                         "head_dim": 8, "parameters": 10, "windowed_layers": 3,
                         "sliding_window": 4}]})",
                      "exceeds");
    }

    void budgetSolvesForTokensAndUsers() {
        // 7B at int8 on 16 GiB, fp16 KV: (17,179,869,184 - 7,241,732,096) / 131,072.
        const auto solution = solveBudget(16ull << 30, 7241732096ull, 131072, 0, 4096);
        QCOMPARE(solution.contextTokens, std::int64_t(75821));
        QCOMPARE(solution.users, std::int64_t(18));
        QVERIFY(solution.fits());
        // A reserve comes off the top.
        QCOMPARE(solveBudget(16ull << 30, 7241732096ull, 131072, 1ull << 30, 4096).contextTokens,
                 std::int64_t(67629));
        // 70B at fp16 on 8 GiB: the weights alone do not fit, and the table says so.
        const auto tooBig = solveBudget(8ull << 30, 2 * 68976648192ull, 327680, 0, 4096);
        QCOMPARE(tooBig.freeBytes, std::int64_t(-129363361792));
        QVERIFY(tooBig.contextTokens < 0);
        QCOMPARE(tooBig.users, std::int64_t(0));
        QVERIFY(!tooBig.fits());
    }

    void tablesHaveARowPerShapeAndPrecision() {
        BudgetQuery query;
        query.deviceGiB = {8, 24};
        query.precisions = {"fp16", "int4"};
        const auto tables = memoryBudgetTables({chapterModel()}, query);
        QCOMPARE(tables.size(), std::size_t(3)); // per-token table + one per device
        QCOMPARE(tables[1].rows.size(), std::size_t(2));
        QCOMPARE(tables[1].number(1, "weight bytes"), 494032768.0 / 2);
        QCOMPARE(tables[1].number(0, "KV per token"), 12288.0);
        query.variant = KvVariant::MultiHead;
        QCOMPARE(memoryBudgetTables({chapterModel()}, query)[1].number(0, "KV per token"), 86016.0);
        query.precisions = {"int3"};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 memoryBudgetTables({chapterModel()}, query));
    }

    void badPresetsAreRefused() {
        const std::string good =
            R"({"name": "x", "layers": 2, "heads": 4, "kv_heads": 2, "head_dim": 8, "parameters": 100})";
        QCOMPARE(parseModelPresets("{\"presets\": [" + good + "]}", "t").size(), std::size_t(1));
        expectRefused("{\"presets\": []}", "empty");
        expectRefused("{\"models\": []}", "presets");
        expectRefused("{\"presets\": [", "t");
        expectRefused(R"({"presets": [{"name": "x", "layers": 2, "heads": 4, "kv_heads": 2,
                      "head_dim": 8}]})",
                      "parameters");
        expectRefused(R"({"presets": [{"name": "x", "layers": 2, "heads": 4, "kv_heads": 3,
                      "head_dim": 8, "parameters": 100}]})",
                      "kv_heads");
        expectRefused(R"({"presets": [{"name": "x", "layers": -2, "heads": 4, "kv_heads": 2,
                      "head_dim": 8, "parameters": 100}]})",
                      "layers");
        expectRefused(R"({"presets": [{"name": "x", "layers": 2, "heads": 4, "kv_heads": 2,
                      "head_dim": 8, "parameters": 100, "kvheads": 1}]})",
                      "kvheads");
        expectRefused(R"({"presets": [{"name": "", "layers": 2, "heads": 4, "kv_heads": 2,
                      "head_dim": 8, "parameters": 100}]})",
                      "name");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, loadModelPresets("/nonexistent.json"));
    }
};

QTEST_GUILESS_MAIN(TestMemoryBudget)
#include "test_memory_budget.moc"
