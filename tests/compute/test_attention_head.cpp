// Chapter item 1: one attention head, uncached (n x n scores) and cached (1 x n), on
// lavapipe with the validation layer, every output row against a CPU loop in double.
#include "compute/experiments/attention/AttentionHeadCost.hpp"
#include "compute/vulkan/VulkanContext.hpp"

#include <QtTest>

using namespace inferscope::compute;
namespace ex = inferscope::compute::experiments;

class TestAttentionHead : public QObject {
    Q_OBJECT
private slots:
    void bothWaysMatchTheCpuLoop() {
        ContextOptions options;
        options.validation = true;
        VulkanContext context(options);
        for (std::uint32_t dim : {64u, 16u}) {
            ex::AttentionHeadOptions o;
            o.lengths = {64, 100};
            o.headDim = dim;
            o.repeats = 1;
            o.checkedRows = 0; // every row
            const auto points = ex::measureAttentionHead(context, o);
            QCOMPARE(points.size(), std::size_t(2));
            for (const auto& p : points) {
                QCOMPARE(p.checkedRows, p.length);
                QVERIFY2(p.uncachedMaxError <= ex::kAttentionHeadTolerance,
                         qPrintable(QString::number(p.uncachedMaxError)));
                QVERIFY2(p.cachedMaxError <= ex::kAttentionHeadTolerance,
                         qPrintable(QString::number(p.cachedMaxError)));
                QCOMPARE(p.uncachedScoreBytes, std::uint64_t(p.length) * p.length * 4);
                QCOMPARE(p.cachedScoreBytes, std::uint64_t(p.length) * 4);
                QVERIFY(p.uncachedMilliseconds > 0 && p.cachedMilliseconds > 0);
            }
            const auto table = ex::attentionHeadTable(points, dim, context.info().name);
            QCOMPARE(table.rows.size(), std::size_t(2));
        }
        QCOMPARE(context.validationLog().errors(), 0u);
    }

    void theCpuLoopIsASoftmaxAverage() {
        // Two keys with equal scores for query row 1: the output is the mean of their values.
        const std::vector<float> q = {5, 5, 0, 0}, k = {1, 0, 0, 1}, v = {2, 4, 6, 8};
        const auto out = ex::attentionHeadRowReference(q, k, v, 2, 2, 1);
        QCOMPARE(out[0], 4.0f);
        QCOMPARE(out[1], 6.0f);
        // Row 0 sees only the first key.
        const auto first = ex::attentionHeadRowReference(q, k, v, 2, 2, 0);
        QCOMPARE(first[0], 2.0f);
        QCOMPARE(first[1], 4.0f);
        // Too few query rows for the row asked (the sanitizer build once caught this read).
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 ex::attentionHeadRowReference({0, 0}, k, v, 2, 2, 1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 ex::attentionHeadRowReference(q, k, v, 2, 2, 2));
    }

    void badRequestsAreRefused() {
        VulkanContext context;
        ex::AttentionHeadOptions o;
        o.headDim = 65;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::measureAttentionHead(context, o));
        o.headDim = 64;
        o.lengths = {1u << 16}; // a 16 GiB score matrix: more than one binding anywhere
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::measureAttentionHead(context, o));
        o.lengths = {};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ex::measureAttentionHead(context, o));
    }
};

QTEST_GUILESS_MAIN(TestAttentionHead)
#include "test_attention_head.moc"
