// Weight error report (compute/experiments/quantization/WeightReport.hpp) on an in-memory two-layer
// model: the errors, bits and bytes per scheme, the worst matrix found where the outliers were
// planted, its outlier statistics, the chosen-matrix column, and thread-count independence.
#include "compute/experiments/quantization/WeightReport.hpp"

#include <QtTest>

#include <cmath>
#include <random>

using namespace inferscope;
using namespace inferscope::compute;
using namespace inferscope::compute::experiments;

namespace {

constexpr std::uint64_t kHidden = 256, kFfn = 512, kKv = 64; // rows longer than a group
constexpr int kPlanted = 5;

// Owns the float data that the StoredTensors view.
struct Arena {
    std::vector<std::vector<float>> buffers;
};

models::WeightStore makeStore() {
    auto arena = std::make_shared<Arena>();
    models::WeightStore store;
    std::mt19937 generator(8);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    auto add = [&](const std::string& name, std::uint64_t rows, std::uint64_t cols) {
        auto& data = arena->buffers.emplace_back(rows * cols);
        for (auto& x : data) x = normal(generator);
        if (name == "blk.1.ffn_down.weight")
            for (int i = 0; i < kPlanted; ++i) data[std::size_t(i) * 997 % data.size()] = 0.5f;
        models::StoredTensor t;
        t.name = name;
        t.type = models::TensorType::F32;
        t.shape =
            cols == 1 ? std::vector<std::uint64_t>{rows} : std::vector<std::uint64_t>{cols, rows};
        t.data = {reinterpret_cast<const std::uint8_t*>(data.data()), data.size() * 4};
        store.add(std::move(t));
    };
    add("token_embd.weight", 100, kHidden);
    add("output_norm.weight", kHidden, 1);
    for (int l = 0; l < 2; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", kHidden, 1);
        add(p + "attn_q.weight", kHidden, kHidden);
        add(p + "attn_k.weight", kKv, kHidden);
        add(p + "attn_v.weight", kKv, kHidden);
        add(p + "attn_output.weight", kHidden, kHidden);
        add(p + "ffn_norm.weight", kHidden, 1);
        add(p + "ffn_gate.weight", kFfn, kHidden);
        add(p + "ffn_up.weight", kFfn, kHidden);
        add(p + "ffn_down.weight", kHidden, kFfn);
    }
    store.setOwner(arena);
    return store;
}

std::size_t rowOf(const Table& t, const std::string& scheme) {
    for (std::size_t r = 0; r < t.rows.size(); ++r)
        if (std::get<std::string>(t.at(r, "scheme")) == scheme) return r;
    throw std::runtime_error("no row " + scheme);
}

} // namespace

class TestWeightReport : public QObject {
    Q_OBJECT
private slots:
    void namesAndStatistics() {
        const auto store = makeStore();
        const auto names = projectionMatrixNames(store);
        QCOMPARE(names.size(), std::size_t(14));
        QCOMPARE(names.front(), std::string("blk.0.attn_q.weight"));
        QCOMPARE(names.back(), std::string("blk.1.ffn_down.weight"));
        QCOMPARE(*canonicalProjectionName("model.layers.12.mlp.down_proj.weight"),
                 std::string("blk.12.ffn_down.weight"));
        QCOMPARE(*canonicalProjectionName("model.layers.3.self_attn.o_proj.weight"),
                 std::string("blk.3.attn_output.weight"));
        QVERIFY(!canonicalProjectionName("blk.1.attn_norm.weight"));

        // One 1 among 999 zeros: mean 0.001, std sqrt(0.001 * 0.999), the 1 is 31.6 sigma out.
        std::vector<float> w(1000, 0.0f);
        w[0] = 1.0f;
        const auto s = weightStatistics(w);
        QCOMPARE(s.count, std::uint64_t(1000));
        QVERIFY(std::fabs(s.mean - 0.001) < 1e-12);
        QVERIFY(std::fabs(s.std - std::sqrt(0.001 * 0.999)) < 1e-9);
        QCOMPARE(s.maxAbs, 1.0);
        QCOMPARE(s.beyondSixSigma, std::uint64_t(1));
        QVERIFY(std::fabs(s.maxOverStd() - 1.0 / std::sqrt(0.000999)) < 1e-6);
    }

    void reportsErrorsBitsBytesAndTheWorstMatrix() {
        const auto store = makeStore();
        WeightReportOptions options;
        options.matrix = "model.layers.0.mlp.up_proj.weight";
        const auto tables = weightErrorReport(store, options);
        QCOMPARE(tables.size(), std::size_t(2));
        const Table& errors = tables[0];
        QCOMPARE(errors.id, std::string("weight-error"));
        QCOMPARE(errors.rows.size(), models::standardQuantSchemes().size());

        const std::uint64_t params =
            2 * (2 * kHidden * kHidden + 2 * kKv * kHidden + 3 * kFfn * kHidden);
        QVERIFY(errors.title.find(groupThousands(std::int64_t(params)) + " parameters") !=
                std::string::npos);
        QCOMPARE(errors.number(rowOf(errors, "fp32"), "worst error"), 0.0);
        QCOMPARE(errors.number(rowOf(errors, "as-stored"), "worst error"), 0.0);
        QCOMPARE(errors.number(rowOf(errors, "as-stored"), "bits/weight"), 32.0);
        QCOMPARE(errors.number(rowOf(errors, "fp16"), "bits/weight"), 16.0);
        // Every matrix holds whole groups: exactly 4.125 and 4.25.
        QCOMPARE(errors.number(rowOf(errors, "int4-g128"), "bits/weight"), 4.125);
        QCOMPARE(errors.number(rowOf(errors, "nf4-b64"), "bits/weight"), 4.25);
        QCOMPARE(errors.number(rowOf(errors, "int4-g128"), "projection bytes"),
                 double(params / 2 + params / 128 * 2));
        // Model bytes: every matrix (embedding too) packed, the 5 norms as f32.
        const double embedding = 100 * kHidden, norms = 5 * kHidden;
        // int8-row: one byte per weight plus an fp16 scale per row (rows per layer:
        // q, o and down hidden, k and v kv, gate and up ffn).
        const double rowsPerLayer = 3 * kHidden + 2 * kKv + 2 * kFfn;
        QCOMPARE(errors.number(rowOf(errors, "int8-row"), "model bytes"),
                 double(params) + 2 * 2 * rowsPerLayer + embedding + 2 * 100 + norms * 4);
        QCOMPARE(errors.number(rowOf(errors, "fp32"), "model bytes"),
                 (double(params) + embedding + norms) * 4);

        // The ordering the chapter shows, and the planted outliers make ffn_down of layer 1
        // the worst matrix under per-tensor INT4.
        auto mean = [&](const char* s) { return errors.number(rowOf(errors, s), "mean error"); };
        QVERIFY(mean("int4-tensor") > mean("int4-row"));
        QVERIFY(mean("int4-row") > mean("int4-g128"));
        QVERIFY(mean("int4-g128") > mean("int4-g64"));
        QVERIFY(mean("int8-tensor") < mean("int4-g64"));
        QVERIFY(mean("fp16") < mean("int8-row"));
        const std::size_t int4 = rowOf(errors, "int4-tensor");
        QCOMPARE(std::get<std::string>(errors.at(int4, "worst matrix")),
                 std::string("blk.1.ffn_down.weight"));
        QVERIFY(errors.number(int4, "worst error") >= errors.number(int4, "median error"));
        QVERIFY(errors.number(int4, "error of blk.0.ffn_up.weight") > 0);
        QVERIFY(errors.number(int4, "error of blk.0.ffn_up.weight") <
                errors.number(int4, "worst error"));

        const Table& outliers = tables[1];
        bool sawPlanted = false, sawChosen = false;
        for (std::size_t r = 0; r < outliers.rows.size(); ++r) {
            const auto name = std::get<std::string>(outliers.at(r, "matrix"));
            if (name == "blk.1.ffn_down.weight") {
                sawPlanted = true;
                QCOMPARE(std::get<std::string>(outliers.at(r, "shape")), std::string("256 x 512"));
                QCOMPARE(outliers.number(r, "beyond 6 sigma"), double(kPlanted));
                QCOMPARE(outliers.number(r, "of"), double(kHidden * kFfn));
                QCOMPARE(outliers.number(r, "max |w|"), 0.5);
                QVERIFY(outliers.number(r, "max/std") > 15);
                QVERIFY(std::get<std::string>(outliers.at(r, "worst under")).find("int4-tensor") !=
                        std::string::npos);
            }
            if (name == "blk.0.ffn_up.weight") {
                sawChosen = true;
                QCOMPARE(std::get<std::string>(outliers.at(r, "worst under")),
                         std::string("(chosen)"));
            }
        }
        QVERIFY(sawPlanted && sawChosen);
    }

    void threadCountDoesNotChangeTheNumbers() {
        const auto store = makeStore();
        WeightReportOptions one, three;
        one.threads = 1;
        three.threads = 3;
        one.schemes = three.schemes = {models::parseQuantScheme("int4-g128"),
                                       models::parseQuantScheme("nf4-b64")};
        const auto a = weightErrorReport(store, one)[0];
        const auto b = weightErrorReport(store, three)[0];
        QCOMPARE(a.rows.size(), std::size_t(2));
        for (std::size_t r = 0; r < 2; ++r)
            for (const char* c : {"mean error", "median error", "worst error", "model bytes"})
                QCOMPARE(a.number(r, c), b.number(r, c));
    }

    void rejectsUnknownMatrices() {
        const auto store = makeStore();
        WeightReportOptions options;
        options.matrix = "blk.7.attn_q.weight";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, weightErrorReport(store, options));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, weightErrorReport(models::WeightStore{}));
    }
};

QTEST_APPLESS_MAIN(TestWeightReport)
#include "test_weight_report.moc"
