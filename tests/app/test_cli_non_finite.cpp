// No silent non-finite results (issue 49, item 3): weights finite in the file that overflow
// at run time (one attention-norm weight of 1e30: the scores reach +Inf, the softmax NaN)
// stop the CPU reference and the Vulkan engine with an error naming the layer and the
// tensor, and no command prints "nan" with status 0.
#include "compute/engine/Engine.hpp"
#include "models/LoadedModel.hpp"
#include "models/formats/GgufFile.hpp"
#include "models/reference/NonFinite.hpp"
#include "models/reference/ReferenceTransformer.hpp"
#include "models/synthetic/SyntheticModel.hpp"
#include "tests/app/CliRunner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

using namespace inferscope;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return text;
}

// Overwrites element `index` of an f32 tensor in a GGUF file.
void patchF32(const std::string& file, const std::string& tensor, std::uint64_t index,
              float value) {
    const auto gguf = models::GgufFile::open(file);
    const auto& infos = gguf.tensorInfos();
    const auto info =
        std::find_if(infos.begin(), infos.end(), [&](const auto& t) { return t.name == tensor; });
    QVERIFY(info != infos.end());
    std::fstream patch(file, std::ios::in | std::ios::out | std::ios::binary);
    patch.seekp(std::streamoff(gguf.dataOffset() + info->offset + 4 * index));
    patch.write(reinterpret_cast<const char*>(&value), 4);
}

} // namespace

class TestCliNonFinite : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string overflow_; // blk.0.attn_norm.weight[3] = 1e30
    std::string text_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        models::SyntheticModelSpec spec;
        spec.layers = 2;
        spec.contextLength = 128;
        overflow_ = dir_.filePath("overflow.gguf").toStdString();
        models::writeSyntheticGguf(spec, overflow_);
        patchF32(overflow_, "blk.0.attn_norm.weight", 3, 1e30f);
        text_ = dir_.filePath("text.txt").toStdString();
        std::ofstream text(text_);
        for (int i = 0; i < 4; ++i)
            text << "the quick brown fox jumps over the lazy dog, again and again and again, "
                    "while the cat sleeps by the warm fire.\n";
    }

    void theCheckFindsEachKindOfValue() {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        std::vector<float> values(3000, 1.0f);
        values.back() = 3e38f;
        QVERIFY(!models::firstNonFinite(values));
        for (float bad : {nan, inf, -inf}) {
            values[2049] = bad;
            const auto found = models::firstNonFinite(values);
            QVERIFY(found);
            QCOMPARE(found->index, std::size_t{2049});
        }
        QCOMPARE(QString::fromStdString(models::nonFiniteName(-inf)), QString("-Inf"));
        try {
            models::requireFinite(values, 1000, 7, 4, "queries (attn_q)");
            QFAIL("accepted a -Inf");
        } catch (const models::NonFiniteError& e) {
            const std::string what = e.what();
            QVERIFY2(contains(what, "layer 4's queries (attn_q) holds -Inf at position 9, "
                                    "element 49"),
                     what.c_str());
        }
    }

    // The file passes the load-time scan (every weight is finite); the CPU reference names
    // the first tensor that is not.
    void cpuReferenceNamesTheLayerAndTensor() {
        const auto model = models::loadModel(overflow_);
        const models::ReferenceTransformer reference(model.config, model.weights);
        auto cache = reference.newCache();
        const std::vector<std::int32_t> tokens{1, 2, 3, 4};
        try {
            reference.forward(tokens, cache);
            QFAIL("the overflow went unnoticed");
        } catch (const models::NonFiniteError& e) {
            const std::string what = e.what();
            QVERIFY2(contains(what, "layer 0's "), what.c_str());
            // 1e30 times unit-sized values stays finite in the norm and the projections; the
            // scores overflow, so the first non-finite tensor is the attention output.
            QVERIFY2(contains(what, "attention output"), what.c_str());
        }
    }

    void vulkanEngineNamesTheLayer() {
        const auto model = models::loadModel(overflow_);
        compute::EngineOptions options;
        options.weightFormat = compute::WeightFormat::F32;
        compute::Engine engine(model, options);
        try {
            engine.step({{1, {1, 2, 3, 4}}});
            QFAIL("the overflow went unnoticed");
        } catch (const models::NonFiniteError& e) {
            const std::string what = e.what();
            QVERIFY2(contains(what, "layer 0's residual stream"), what.c_str());
            QVERIFY2(contains(what, "sequence 1"), what.c_str());
        }
        // The failed step was rolled back: the sequence holds nothing.
        QCOMPARE(engine.sequenceLength(1), 0u);
    }

    void noCommandPrintsNanWithStatusZero() {
        const std::vector<std::vector<std::string>> commands{
            {"generate", overflow_, "-p", "abc", "-n", "4", "--backend", "cpu"},
            {"generate", overflow_, "-p", "abc", "-n", "4", "--backend", "vulkan", "--format",
             "f32"},
            {"perplexity", overflow_, text_, "--ctx", "64", "--backend", "cpu"},
            {"perplexity", overflow_, text_, "--ctx", "64", "--backend", "vulkan"},
            {"softlabels", overflow_, "-p", "abc", "--scheme", "none", "--backend", "cpu"}};
        for (const auto& command : commands) {
            const auto r = tests::runCli(command);
            const std::string label = command[0] + " " + command.back() + ": " + r.err;
            QVERIFY2(r.status == 1, label.c_str());
            QVERIFY2(contains(r.err, "non-finite value at run time") && contains(r.err, "layer 0"),
                     label.c_str());
            QVERIFY2(!contains(lower(r.out), "nan"), (label + r.out).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliNonFinite)
#include "test_cli_non_finite.moc"
