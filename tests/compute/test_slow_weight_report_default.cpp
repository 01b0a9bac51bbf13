// The chapter's weight-quantization table on the default model (SmolLM2-135M-Instruct, all
// 210 projection matrices): per-tensor INT4 error > per-row > group-128, and NF4 below INT4
// at NF4's own block size (64) as well as below group-128; bits per weight as printed.
// Needs the model file: skipped when it is absent, unless INFERSCOPE_REQUIRE_MODEL is set.
#include "compute/experiments/quantization/WeightReport.hpp"
#include "models/LoadedModel.hpp"

#include "tests/DefaultModel.hpp"
#include <QtTest>

#include <cstdlib>
#include <filesystem>

using namespace inferscope;
using namespace inferscope::compute;

class TestSlowWeightReportDefault : public QObject {
    Q_OBJECT
private slots:
    void int4GranularityAndNf4() {
        INFERSCOPE_DEFAULT_MODEL_OR_SKIP(path);
        const auto model = models::loadModel(path);
        experiments::WeightReportOptions options;
        for (const char* s : {"int8-tensor", "int8-row", "int4-tensor", "int4-row", "int4-g128",
                              "int4-g64", "nf4-b64"})
            options.schemes.push_back(models::parseQuantScheme(s));
        const auto tables = experiments::weightErrorReport(model, options);
        const Table& errors = tables[0];
        QVERIFY(errors.title.find("210 projection matrices") != std::string::npos);
        auto value = [&](std::size_t row, const char* column) {
            return errors.number(row, column);
        };
        enum { Int8Tensor, Int8Row, Int4Tensor, Int4Row, G128, G64, Nf4 };
        for (std::size_t r = 0; r < errors.rows.size(); ++r)
            qInfo("%-12s %.4f bits  mean %.4f  median %.4f  worst %.4f",
                  std::get<std::string>(errors.at(r, "scheme")).c_str(), value(r, "bits/weight"),
                  value(r, "mean error"), value(r, "median error"), value(r, "worst error"));

        QCOMPARE(value(G128, "bits/weight"), 4.125);
        QCOMPARE(value(G64, "bits/weight"), 4.25);
        QCOMPARE(value(Nf4, "bits/weight"), 4.25);
        for (const char* column : {"mean error", "median error"}) {
            QVERIFY(value(Int4Tensor, column) > value(Int4Row, column));
            QVERIFY(value(Int4Row, column) > value(G128, column));
            QVERIFY(value(G128, column) > value(G64, column));
            QVERIFY(value(Nf4, column) < value(G64, column)); // equal block size
            QVERIFY(value(Int8Row, column) < value(Int8Tensor, column));
            QVERIFY(value(Int8Tensor, column) < value(Nf4, column));
        }
        // One scale per tensor at 4 bits wrecks the worst matrix (the chapter's 0.99).
        QVERIFY(value(Int4Tensor, "worst error") > 0.8);
        QVERIFY(value(Nf4, "worst error") < 0.2);

        // The worst per-tensor INT4 matrix has weights far out: max/std well above 6, and
        // some beyond 6 sigma.
        const Table& outliers = tables[1];
        const std::string worst = std::get<std::string>(errors.at(Int4Tensor, "worst matrix"));
        bool found = false;
        for (std::size_t r = 0; r < outliers.rows.size(); ++r)
            if (std::get<std::string>(outliers.at(r, "matrix")) == worst) {
                found = true;
                QVERIFY(outliers.number(r, "max/std") > 20);
                QVERIFY(outliers.number(r, "beyond 6 sigma") > 0);
            }
        QVERIFY(found);
    }
};

QTEST_APPLESS_MAIN(TestSlowWeightReportDefault)
#include "test_slow_weight_report_default.moc"
