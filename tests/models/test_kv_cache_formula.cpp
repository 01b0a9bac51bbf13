// KV cache bytes per token (ModelConfig::kvBytesPerToken) against the chapter's printed numbers:
// 24 layers x 2 KV heads x 64 x fp16 = 12,288 bytes; with full multi-head attention (14 KV
// heads, one per query head) 86,016 bytes: exactly 7x, the query-to-KV head ratio.
#include "models/ModelConfig.hpp"

#include <QtTest>

using inferscope::models::ModelConfig;

class TestKvCacheFormula : public QObject {
    Q_OBJECT
private slots:
    void groupedQueryAttentionDividesTheCache() {
        ModelConfig gqa;
        gqa.layers = 24;
        gqa.heads = 14;
        gqa.kvHeads = 2;
        gqa.headDim = 64;
        ModelConfig mha = gqa;
        mha.kvHeads = 14;
        QCOMPARE(gqa.kvBytesPerToken(), std::uint64_t(12288));
        QCOMPARE(mha.kvBytesPerToken(), std::uint64_t(86016));
        QCOMPARE(mha.kvBytesPerToken() / gqa.kvBytesPerToken(), std::uint64_t(7));
        QCOMPARE(mha.kvBytesPerToken() % gqa.kvBytesPerToken(), std::uint64_t(0));
        QCOMPARE(gqa.queryGroupSize(), 7u);
        // The chapter's allocator check: 295 tokens take 3,624,960 bytes.
        QCOMPARE(gqa.kvBytesPerToken() * 295, std::uint64_t(3624960));
        // 7B class: 32 layers x 8 KV heads x 128 = 128 KiB per token in fp16.
        ModelConfig sevenB;
        sevenB.layers = 32;
        sevenB.heads = 32;
        sevenB.kvHeads = 8;
        sevenB.headDim = 128;
        QCOMPARE(sevenB.kvBytesPerToken(), std::uint64_t(128 * 1024));
        QCOMPARE(sevenB.kvBytesPerToken(4), std::uint64_t(256 * 1024));
    }
};

QTEST_APPLESS_MAIN(TestKvCacheFormula)
#include "test_kv_cache_formula.moc"
